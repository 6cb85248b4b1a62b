"""A small place -> country table for generalization (European states and their larger cities).

Written for this project from general knowledge; it is deliberately small.  Places it does not know
generalize to "a place".
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Dict, Mapping, Optional

_COUNTRIES: Mapping[str, str] = MappingProxyType({
    "Albania": "Tirana Durrës Vlorë Shkodër",
    "Armenia": "Yerevan Gyumri Vanadzor",
    "Austria": "Vienna Graz Linz Salzburg Innsbruck Klagenfurt",
    "Azerbaijan": "Baku Ganja Sumgait Nakhchivan",
    "Belgium": "Brussels Antwerp Ghent Liège Bruges Charleroi",
    "Bosnia and Herzegovina": "Sarajevo Banja_Luka Mostar Tuzla Zenica",
    "Bulgaria": "Sofia Plovdiv Varna Burgas Ruse Pleven",
    "Croatia": "Zagreb Split Rijeka Osijek Zadar",
    "Cyprus": "Nicosia Limassol Larnaca Famagusta Paphos Kyrenia",
    "Czech Republic": "Prague Brno Ostrava Plzeň Olomouc",
    "Denmark": "Copenhagen Aarhus Odense Aalborg",
    "Estonia": "Tallinn Tartu Narva Pärnu",
    "Finland": "Helsinki Espoo Tampere Turku Oulu Vantaa",
    "France": "Paris Marseille Lyon Toulouse Nice Nantes Strasbourg Bordeaux Lille Montpellier Rennes",
    "Georgia": "Tbilisi Kutaisi Batumi Rustavi Gori",
    "Germany": "Berlin Hamburg Munich Cologne Frankfurt Stuttgart Düsseldorf Leipzig Dresden Hanover Bremen",
    "Greece": "Athens Thessaloniki Patras Piraeus Heraklion Larissa",
    "Hungary": "Budapest Debrecen Szeged Miskolc Pécs Győr",
    "Iceland": "Reykjavík Reykjavik Akureyri",
    "Ireland": "Dublin Cork Limerick Galway Waterford",
    "Italy": "Rome Milan Naples Turin Palermo Genoa Bologna Florence Bari Catania Venice Verona",
    "Latvia": "Riga Daugavpils Liepāja Jelgava",
    "Lithuania": "Vilnius Kaunas Klaipėda Šiauliai Panevėžys",
    "Luxembourg": "Luxembourg_City Esch-sur-Alzette",
    "Malta": "Valletta Birkirkara Sliema",
    "Moldova": "Chișinău Chisinau Bălți Tiraspol Bender",
    "Montenegro": "Podgorica Nikšić Budva",
    "Netherlands": "Amsterdam Rotterdam The_Hague Utrecht Eindhoven Groningen",
    "North Macedonia": "Skopje Bitola Kumanovo Ohrid",
    "Norway": "Oslo Bergen Trondheim Stavanger Tromsø Drammen",
    "Poland": "Warsaw Kraków Cracow Łódź Lodz Wrocław Poznań Gdańsk Gdansk Gdynia Szczecin Lublin Katowice",
    "Portugal": "Lisbon Porto Braga Coimbra Funchal",
    "Romania": "Bucharest Cluj-Napoca Timișoara Timisoara Iași Iasi Constanța Craiova Brașov Galați",
    "Russia": "Moscow Saint_Petersburg St_Petersburg Novosibirsk Yekaterinburg Kazan Nizhniy_Novgorod "
              "Chelyabinsk Samara Omsk Rostov-on-Don Ufa Krasnoyarsk Perm Voronezh Volgograd Grozny",
    "Serbia": "Belgrade Novi_Sad Niš Kragujevac Subotica",
    "Slovakia": "Bratislava Košice Prešov Žilina Nitra",
    "Slovenia": "Ljubljana Maribor Celje Koper",
    "Spain": "Madrid Barcelona Valencia Seville Zaragoza Málaga Bilbao",
    "Sweden": "Stockholm Gothenburg Malmö Uppsala Västerås Örebro",
    "Switzerland": "Zurich Zürich Geneva Basel Bern Lausanne Lucerne",
    "Turkey": "Istanbul Ankara Izmir İzmir Bursa Antalya Adana Diyarbakır Diyarbakir Gaziantep Konya Kayseri "
              "Mersin Şanlıurfa Van Batman Hakkari Şırnak Mardin Tunceli Kahramanmaraş Bartın Elazığ Erzurum",
    "Ukraine": "Kyiv Kiev Kharkiv Odesa Odessa Dnipro Donetsk Lviv Zaporizhzhia Luhansk Sevastopol Simferopol",
    "United Kingdom": "London Birmingham Manchester Glasgow Liverpool Edinburgh Leeds Belfast Cardiff Bristol",
})
_ALIASES: Mapping[str, str] = MappingProxyType({
    "the netherlands": "Netherlands", "the united kingdom": "United Kingdom", "uk": "United Kingdom",
    "russian federation": "Russia", "the russian federation": "Russia", "türkiye": "Turkey",
    "republic of turkey": "Turkey", "the republic of turkey": "Turkey", "republic of poland": "Poland",
    "the czech republic": "Czech Republic"})


def _places() -> Mapping[str, str]:
    """Lower-case place (city, country, alias) -> country, read-only."""
    out: Dict[str, str] = {}
    for country, cities in _COUNTRIES.items():
        for city in cities.split():
            out[city.replace("_", " ").lower()] = country
        out[country.lower()] = country
    out.update(_ALIASES)
    return MappingProxyType(out)


_CITIES = _places()


def country_of(place: str) -> Optional[str]:
    """Country of a known place or country name, else None."""
    key = " ".join(place.split()).strip(" ,.").lower()
    if key in _CITIES:
        return _CITIES[key]
    for part in reversed([p.strip() for p in key.split(",")]):  # "Gdynia, Poland"
        if part in _CITIES:
            return _CITIES[part]
    return None
