"""Surrogate pools for pseudonymization: invented or generic values, none taken from TAB."""

FIRST_NAMES = [
    "Alma", "Bruno", "Clara", "Dario", "Elin", "Felix", "Greta", "Hugo", "Ines", "Jonas", "Kira", "Lorenz",
    "Mira", "Nils", "Olga", "Pavel", "Rosa", "Stefan", "Tilda", "Urs", "Vera", "Walter", "Yara", "Zeno",
    "Amira", "Boris", "Celia", "Emil", "Frida", "Goran", "Hanna", "Ivo", "Jana", "Karel", "Lena", "Marek",
]
LAST_NAMES = [
    "Aldana", "Brekke", "Castell", "Dorfman", "Eskola", "Fontaine", "Gruber", "Halloran", "Ivanic", "Jansen",
    "Kovar", "Lindqvist", "Moreau", "Novak", "Ostrowski", "Pellegrini", "Quist", "Rahman", "Sorensen",
    "Tamas", "Ulrich", "Valente", "Weiss", "Yilmazer", "Zeller", "Amrani", "Bergqvist", "Cerny", "Delacroix",
    "Engel", "Falk", "Horvath", "Kessler", "Marini", "Nyberg", "Petrov",
]
PLACES = [
    "Northbridge", "Eastholm", "Westvale", "Southport", "Marrow Bay", "Linden", "Ashford Hill", "Crestmoor",
    "Redfield", "Stonehaven", "Brightwater", "Oakridge", "Elmstead", "Fairhaven", "Greymouth", "Highcliff",
]
ORGANISATIONS = [
    "Meridian Holdings Ltd", "Harbor Logistics", "Northgate Clinic", "Silverline Bank", "Alder & Co.",
    "Crescent Media Group", "Summit Engineering", "Bluewater Trading", "Pinecrest School", "Orion Insurance",
    "Keystone Foods", "Lakeside Hospital", "Granite Works", "Beacon Press", "Riverside Council", "Atlas Freight",
]
NATIONALITIES = [
    "Arcadian", "Borovian", "Caldonian", "Dravish", "Estmarkish", "Felsian", "Galorian", "Hestrian",
]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
