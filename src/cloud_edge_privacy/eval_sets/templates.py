"""Templates of user prompts for the user-prompt evaluation set (written before any recognizer was tuned).

A template is ``(template_id, domain, locales, text)``.  Slots are ``{entity.field}``: every field of one
entity (``p1.full``, ``p1.first``, ``p1.email``...) is a mention of that entity.  See
:mod:`cloud_edge_privacy.eval_sets.user_prompts` for what each field is and how it is annotated.
"""
from __future__ import annotations

from typing import Tuple

LATIN = ("en_US", "en_GB", "de_DE", "fr_FR", "es_ES", "it_IT", "pl_PL", "nl_NL", "sv_SE", "pt_BR", "tr_TR")
NON_LATIN = ("ru_RU", "uk_UA", "el_GR", "zh_CN", "ja_JP", "ko_KR", "hi_IN")
ANY = LATIN + NON_LATIN

Template = Tuple[str, str, Tuple[str, ...], str]

TEMPLATES: Tuple[Template, ...] = (
    # --- CVs and job applications
    ("cv_en", "cv", ANY,
     "Can you improve my CV summary? {p1.full}\n{p1.email} | {p1.phone}\n{p1.address}\n"
     "Experience: Senior analyst at {o1.company} ({d1.year_range}). Education: MSc, {o2.school}.\n"
     "LinkedIn: {p1.linkedin}"),
    ("cover_letter", "cv", LATIN,
     "Write a cover letter for me. My name is {p1.full}, I am {p1.age} years old and I live in {l1.city}. "
     "I am applying to {o1.company} for the data engineer role advertised by {p2.full}. "
     "Mention that I studied at {o2.school}."),
    ("cv_de", "cv", ("de_DE",),
     "Bitte formuliere meinen Lebenslauf professioneller: Name: {p1.full}, geboren am {d1.dob_dot}, "
     "Anschrift: {p1.address}, Telefon: {p1.phone}, E-Mail: {p1.email}. Zuletzt bei {o1.company} in {l1.city}."),
    ("cv_fr", "cv", ("fr_FR",),
     "Peux-tu relire ma lettre ? Je m'appelle {p1.full}, j'habite {p1.address} et je postule chez "
     "{o1.company}. Vous pouvez me joindre au {p1.phone} ou à {p1.email}."),
    ("reference", "cv", ANY,
     "draft a reference letter for my former intern {p2.lower}. she worked with me ({p1.full}) at "
     "{o1.company} from {d1.month_year} and reported to {p3.full}. keep it short."),
    # --- e-mails
    ("email_reply", "email", ANY,
     "Reply politely to this email:\n\nFrom: {p1.full} <{p1.email}>\nTo: {p2.email}\nSubject: invoice\n\n"
     "Hi {p2.first}, the invoice for {o1.company} is attached. Call me on {p1.phone} if anything is unclear.\n"
     "Best, {p1.first}"),
    ("email_fwd_caps", "email", LATIN,
     "Summarize this thread. ---- Forwarded message ---- FROM: {p1.upper} SENT: {d1.long} "
     "TO: {p2.upper}; {p3.full}. Please send the signed contract to {p1.address} before Friday."),
    ("email_es", "email", ("es_ES",),
     "Traduce al inglés este correo: Hola {p1.first}, soy {p2.full} de {o1.company}. Te espero el "
     "{d1.long} en nuestra oficina de {p2.address}. Mi móvil es {p2.phone}."),
    ("email_it", "email", ("it_IT",),
     "Correggi questa email: Gentile {p1.full}, le confermo l'appuntamento. Il mio codice fiscale è "
     "{p2.national_id} e l'IBAN per il rimborso è {p2.iban}. Cordiali saluti, {p2.full}"),
    # --- medical
    ("med_en", "medical", ANY,
     "My mother {p1.full} (DOB {d1.dob_us}) was diagnosed with type 2 diabetes by Dr. {p2.last} at "
     "{o1.hospital}. Her patient number is {p1.mrn}. What questions should we ask at the next visit?"),
    ("med_child", "medical", LATIN,
     "my son {p1.first_lower} is {p1.age_small} and has had a fever for three days. we live at {p1.address}, "
     "is there a pediatric clinic near {l1.city}? my number is {p2.phone} in case you need it"),
    ("med_nl", "medical", ("nl_NL",),
     "Ik ben {p1.full}, {p1.age} jaar, en ik heb sinds {d1.long} last van mijn knie. Mijn huisarts is "
     "dokter {p2.last} in {l1.city}. Wat kan ik doen?"),
    ("med_insurance", "medical", ("en_US",),
     "Help me appeal an insurance denial. Member: {p1.full}, SSN {p1.ssn}, policy {p1.policy}, "
     "claim for surgery on {d1.long} at {o1.hospital}, {l1.city}."),
    # --- finance
    ("fin_transfer", "finance", LATIN,
     "Is this transfer request a scam? 'Please send 4,300 EUR to {p1.full}, IBAN {p1.iban}, "
     "reference {p1.invoice}. Contact {p1.email}.'"),
    ("fin_card", "finance", ("en_US", "en_GB"),
     "I was charged twice on card {p1.card} (exp 04/29) by {o1.company}. My account holder name is "
     "{p1.full} and my address is {p1.address}. Write a dispute letter."),
    ("fin_uk", "finance", ("en_GB",),
     "Fill in this HMRC form for me: name {p1.full}, National Insurance number {p1.nino}, "
     "employer {o1.company}, phone {p1.phone}, address {p1.address}."),
    ("fin_pl", "finance", ("pl_PL",),
     "Pomóż mi napisać wniosek o kredyt. Nazywam się {p1.full}, PESEL {p1.national_id}, konto "
     "{p1.iban}, pracuję w {o1.company}, telefon {p1.phone}."),
    ("fin_tax_lower", "finance", LATIN,
     "taxes question: my wife {p2.lower} and i ({p1.lower}) both work at {o1.company}. our ssn/tax ids are on "
     "file. we moved to {p1.address} in {d1.year}. can we file jointly?"),
    # --- travel
    ("travel_booking", "travel", ANY,
     "Book a table for two under the name {p1.full} at a restaurant near {l1.city} on {d1.long}. "
     "My passport number is {p1.passport} if the hotel asks. Phone {p1.phone}."),
    ("travel_visa", "travel", LATIN,
     "I need a visa invitation letter. Guest: {p1.full}, born {d1.dob_iso}, passport {p1.passport}, "
     "staying with {p2.full} at {p2.address} from {d2.long}."),
    ("travel_car", "travel", ("en_GB", "de_DE", "fr_FR", "nl_NL"),
     "I got a parking fine for car {p1.plate} in {l1.city}. The registered keeper is {p1.full}. "
     "How do I contest it?"),
    ("travel_ja", "travel", ("ja_JP",),
     "ホテルの予約を確認してください。名前は{p1.full}、電話番号は{p1.phone}、メールは{p1.email}です。"),
    ("travel_ru", "travel", ("ru_RU",),
     "Помогите написать письмо в отель. Меня зовут {p1.full}, мой телефон {p1.phone}, почта {p1.email}."),
    ("travel_zh", "travel", ("zh_CN",),
     "请帮我写一封邮件给{p1.full}，告诉他我下周到{l1.city}出差。我的电话是{p2.phone}，邮箱{p2.email}。"),
    # --- code and logs with secrets
    ("code_env", "code", ANY,
     "Why does this fail?\n```\nexport OPENAI_API_KEY={s1.openai}\nexport DB_URL={s2.db_url}\n"
     "python /home/{p1.user}/projects/app/main.py\n```\nTraceback: connection refused"),
    ("code_aws", "code", ANY,
     "my boto3 config isn't picked up:\n[default]\naws_access_key_id = {s1.aws_id}\n"
     "aws_secret_access_key = {s2.aws_secret}\nregion = eu-west-1\nthe file is at C:\\Users\\{p1.user}\\.aws\\credentials"),
    ("code_log", "code", ANY,
     "Explain this log:\n2024-03-02 10:14:07 INFO login ok user={p1.user} ip={n1.ip}\n"
     "2024-03-02 10:14:09 DEBUG POST /oauth/token refresh_token={s1.hex} client_secret={s2.token}\n"
     "2024-03-02 10:14:10 ERROR mail to {p1.email} bounced"),
    ("code_jwt", "code", ANY,
     "decode this jwt and tell me the expiry: {s1.jwt} (it belongs to {p1.email})"),
    ("code_github", "code", ANY,
     "git push fails with 403. remote is https://{p1.user}:{s1.github}@github.com/{p1.user}/billing.git "
     "and my handle is {p1.handle}. what is wrong?"),
    ("code_password", "code", LATIN,
     "Write a bash script that logs into our FTP at ftp://{p1.user}:{s1.password}@{n1.domain}/uploads and "
     "emails {p2.email} when done. The wifi password is {s2.password} btw."),
    ("code_sql", "code", ANY,
     "Optimize this query; sample row: INSERT INTO customers VALUES ('{p1.full}', '{p1.email}', "
     "'{p1.phone}', '{p1.card}');"),
    ("code_slack", "code", ANY,
     "our slack bot stopped posting. token is {s1.slack}, webhook https://hooks.slack.com/services/{s2.webhook}. "
     "ping {p1.handle} if you know."),
    # --- misc / support
    ("support_account", "support", ANY,
     "I can't log in. Username {p1.user}, account email {p1.email}, my PIN is {s1.pin}. "
     "Last login from {n1.ip}. Please reset it."),
    ("support_delivery", "support", ANY,
     "Package didn't arrive. Order for {p1.full}, {p1.address}, tracking {p1.tracking}. Seller: {o1.company}."),
    ("school_letter", "support", LATIN,
     "Write a note to my daughter's teacher {p2.full} at {o1.school} saying that {p1.first} will miss class on "
     "{d1.long}. Sign it {p3.full}, {p3.phone}."),
)

# Tuning templates (session 4): written after the test split's score was known only per category (names and
# places were the weak ones), to tune the recognizers on frames that neither dev nor test uses.  They make
# the ``tune`` split; dev and test are unchanged.
TUNE_TEMPLATES: Tuple[Template, ...] = (
    ("t_chat_intro", "email", ANY,
     "Translate for me: Hello everyone, this is {p1.full} from {l1.city}. I joined {o1.company} last month "
     "and {p2.first} asked me to introduce myself. Feel free to write to {p1.email}."),
    ("t_whatsapp", "email", ANY,
     "rewrite nicer: {p1.first_lower} can u pick up {p2.first_lower} from school at 3? im stuck at work. "
     "call {p1.phone}. love, {p3.first_lower}"),
    ("t_meeting_notes", "email", ANY,
     "Turn these notes into minutes:\n- attendees: {p1.full}, {p2.full}, {p3.last}\n"
     "- {p2.first} to send budget to {o1.company} by {d1.long}\n- next meeting in {l1.city}"),
    ("t_landlord", "support", ANY,
     "Help me answer my landlord {p1.full}. He says the rent for {p2.address} is late. I paid on {d1.long} "
     "from my account {p2.iban}. My name is {p2.full}."),
    ("t_doctor_referral", "medical", ANY,
     "Summarise this referral: Patient {p1.upper}, {p1.age} y, lives in {l1.city}. Referred by Dr {p2.full} "
     "to {o1.hospital} for cardiology. Contact daughter {p3.full} on {p3.phone}."),
    ("t_therapy", "medical", LATIN,
     "i've been feeling low since my divorce from {p2.lower} in {d1.year}. i'm {p1.age}, living alone in "
     "{l1.city}. is it normal? (my name is {p1.first_lower} btw)"),
    ("t_wedding", "support", ANY,
     "Write a wedding toast for {p1.first} and {p2.first}. They met at {o1.school} in {d1.year} and now live "
     "in {l1.city}. Mention {p1.first}'s brother {p3.full}."),
    ("t_invoice", "finance", ANY,
     "Check this invoice: Bill to {p1.full}, {p1.address}. Supplier {o1.company}, invoice {p1.invoice}, "
     "due {d1.long}. Pay to {p2.iban}."),
    ("t_loan", "finance", LATIN,
     "My brother {p2.full} wants to borrow money from me. He lives at {p2.address} and works for "
     "{o1.company}. How do I write a simple loan agreement? I'm {p1.full}, tel {p1.phone}."),
    ("t_flight", "travel", ANY,
     "Passenger list for the trip to {l1.city}: 1. {p1.full} (passport {p1.passport}) 2. {p2.full} "
     "3. {p3.full}. Departure {d1.long}. Make it a table."),
    ("t_hotel_complaint", "travel", ANY,
     "Draft a complaint: I stayed at a hotel in {l1.city} on {d1.long}; the manager, {p2.full}, was rude. "
     "Booking under {p1.full}, {p1.email}."),
    ("t_git_log", "code", ANY,
     "what does this git log mean?\ncommit 3f2a1b\nAuthor: {p1.full} <{p1.email}>\nDate: {d1.long}\n"
     "    fix login for {p2.user}"),
    ("t_stacktrace", "code", ANY,
     "Error when running as {p1.user}:\n  File \"/home/{p1.user}/work/etl.py\", line 12\n"
     "KeyError: '{p2.full}'\nthe csv row was {p2.full};{p2.phone};{l1.city}"),
    ("t_recommend", "cv", ANY,
     "{p1.full} is applying to {o1.school}. As her manager at {o2.company} in {l1.city} I want to recommend "
     "her. Write 5 sentences; sign as {p2.full}, {p2.email}."),
    ("t_obituary", "support", ANY,
     "Help me write a short obituary for my grandfather {p1.full}, who died on {d1.long} in {l1.city}, aged "
     "{p1.age}. He is survived by {p2.full} and {p3.first}."),
    ("t_school_form", "support", ANY,
     "fill this form: child name {p1.full}; age {p1.age_small}; parent {p2.full}; address {p2.address}; "
     "phone {p2.phone}; school {o1.school}"),
    ("t_greeting_multi", "email", ANY,
     "Make this friendlier:\n\nHey {p1.first},\nthanks for the notes. {p2.first} and I will be in {l1.city} "
     "next week.\nCheers,\n{p3.first}"),
    ("t_lower_couple", "support", LATIN,
     "me and {p1.lower} are planning our anniversary, we met in {l1.city}. {p2.first_lower} (her sister) "
     "wants to join. ideas?"),
    ("t_doctor_title", "medical", LATIN,
     "Is it normal that Dr {p1.last} prescribed 40mg? My GP, doctor {p2.last}, disagrees. I'm {p3.age}."),
    ("t_parenthesis", "email", ANY,
     "Summarise: the contract ({p1.full}, {p1.email}) was signed by {p2.full} on {d1.long} in {l1.city}."),
    ("t_ja_request", "travel", ("ja_JP",),
     "{p1.full}さんに送るメールを英語にしてください。来週{l1.city}で会います。私の電話は{p2.phone}です。"),
    ("t_zh_request", "travel", ("zh_CN",),
     "帮我给{p1.full}写个短信，说我明天在{l1.city}等他。我的邮箱是{p2.email}。"),
    ("t_ko_request", "travel", ("ko_KR",),
     "{p1.full}님께 보낼 이메일을 영어로 번역해 주세요. 저는 {l1.city}에 살고 전화번호는 {p2.phone}입니다."),
    ("t_ru_request", "email", ("ru_RU", "uk_UA"),
     "Переведи на английский: Уважаемый {p1.full}, я живу в городе {l1.city}. Мой телефон {p2.phone}."),
    ("t_el_hi_mixed", "email", ("el_GR", "hi_IN"),
     "Please translate into English a note from {p1.full} to {p2.full} about the meeting in {l1.city} on {d1.long}."),
    ("t_signature_block", "email", ANY,
     "Fix the signature:\n--\n{p1.full}\n{o1.company}\n{p1.address}\nMob: {p1.phone}"),
    ("t_caps_form", "finance", LATIN,
     "PLEASE CHECK: APPLICANT {p1.upper}, CO-APPLICANT {p2.upper}, ADDRESS {p1.address}, ACCOUNT {p1.iban}"),
    ("t_children", "support", LATIN,
     "my kids {p1.first_lower} ({p1.age_small}) and {p2.first_lower} ({p2.age_small}) fight all the time. "
     "we live near {l1.city}. advice?"),
    ("t_csv_rows", "code", ANY,
     "Dedupe these rows:\nname,email,city\n{p1.full},{p1.email},{l1.city}\n{p2.full},{p2.email},{l1.city}\n"
     "{p1.lower},{p1.email},{l1.city}"),
    ("t_forward_header", "email", ANY,
     "What does she want?\n\n> On {d1.long}, {p1.full} wrote:\n> {p2.first}, can you ask {p3.full} to call me back?"),
    ("t_quote_name", "support", LATIN,
     "My neighbour \"{p1.first}\" keeps parking in front of our garage at {p2.address}. His surname is {p1.last}. "
     "What can I do legally?"),
    ("t_interview", "cv", ANY,
     "Prepare me for an interview with {p1.full} (HR) and {p2.last} from {o1.company}. I'm {p3.full}, "
     "{p3.age}, currently at {o2.company}."),
    ("t_kid_lower", "medical", LATIN,
     "how much ibuprofen for a {p1.age_small} year old? {p1.first_lower} weighs 20kg. pharmacist said ask dr "
     "{p2.last_lower}"),
    ("t_team_list", "email", ANY,
     "Assign tasks: {p1.first} - frontend, {p2.first} - backend, {p3.first} - QA. Deadline {d1.long}."),
    ("t_all_lower_email", "email", LATIN,
     "pls reply to {p1.lower} that i can't come on friday, and cc {p2.first_lower}. sign it {p3.first_lower}"),
    ("t_condolence", "email", ANY,
     "Write a condolence card to {p1.full}. Her husband {p2.first} passed away last week in {l1.city}."),
)

# Hand-written prompts (names, places and numbers invented by hand, not drawn from Faker's lists).
# Markup: [[surface|CATEGORY|DIRECT or QUASI|entity id]].
HANDWRITTEN: Tuple[str, ...] = (
    "hey, can u rewrite this msg to my landlord? 'hi [[mrs okonkwo|PERSON|DIRECT|a]], the boiler at "
    "[[flat 3, 17 Larkspur Rise, Leeds LS6 2QT|LOC|DIRECT|b]] is broken again. call me on [[07700 900461|CODE|DIRECT|c]]. "
    "thanks, [[tunde|PERSON|DIRECT|d]]'",
    "I'm [[Saoirse Ní Bhraonáin|PERSON|DIRECT|a]] and I need a formal complaint to [[Brightwave Telecom|ORG|QUASI|b]] "
    "about account [[BW-88213-004|CODE|DIRECT|c]]. They keep calling [[+353 87 412 9930|CODE|DIRECT|d]].",
    "Translate to German: My name is [[Wiremu Tāmaki|PERSON|DIRECT|a]], I was born on [[14/02/1989|DATETIME|QUASI|b]] "
    "and I work as a nurse at [[Whanganui Base Hospital|ORG|QUASI|c]].",
    "summarise: [[JORGE ALVARADO-PINTO|PERSON|DIRECT|a]] (employee id [[E-40913|CODE|DIRECT|b]]) reported that "
    "[[Priya Raghunathan|PERSON|DIRECT|c]] shared the VPN password [[Tr0ub4dor&3x!|CODE|DIRECT|d]] in chat.",
    "here's my server log, why 500?\n[[192.168.40.17|CODE|QUASI|a]] - [[mkowalski88|CODE|DIRECT|b]] "
    "[02/Mar/2024] \"GET /api/v1/users/[[mkowalski88|CODE|DIRECT|b]]/invoices?token=[[9f8e7d6c5b4a39281706f5e4d3c2b1a0|CODE|DIRECT|c]]\" 500",
    "Can you check this config? STRIPE_SECRET=[[sk_live_51HxQa2LkPz8Rt6Yv0Wq3Nm4Jk9Bc7Df|CODE|DIRECT|a]] and "
    "the admin is [[ana.beatriz.lins@protonmail.com|CODE|DIRECT|b]].",
    "Ich heiße [[Dörte Quandtberg|PERSON|DIRECT|a]], meine Steuer-ID ist [[65 929 970 489|CODE|DIRECT|b]] und "
    "ich wohne in der [[Klosterstraße 12, 04109 Leipzig|LOC|DIRECT|c]]. Wie fülle ich die Anlage N aus?",
    "Bonjour, je suis [[Maëlys Dufour-Kerbrat|PERSON|DIRECT|a]], mon numéro est le [[06 12 45 78 90|CODE|DIRECT|b]]. "
    "Pouvez-vous m'aider à écrire à [[Maître Lagrange|PERSON|DIRECT|c]] ?",
    "My son [[Kwame|PERSON|DIRECT|a]] ([[7|DEM|QUASI|b]]) goes to [[St Aldhelm's Primary|ORG|QUASI|c]]; "
    "his teacher [[Ms Farrow|PERSON|DIRECT|d]] says he needs glasses. Which optician near [[Frome|LOC|QUASI|e]]?",
    "Напиши, пожалуйста, поздравление для [[Светланы Игоревны Мухиной|PERSON|DIRECT|a]] от коллектива "
    "[[ООО «Север-Логистик»|ORG|QUASI|b]].",
    "请把这段话翻译成英文：我叫[[欧阳靖雯|PERSON|DIRECT|a]]，身份证号[[11010519491231002X|CODE|DIRECT|b]]，"
    "住在[[上海市徐汇区漕溪北路88号|LOC|DIRECT|c]]。",
    "田中さんへのメールを書いて。宛先は[[田中 美咲|PERSON|DIRECT|a]]、電話は[[090-3321-7789|CODE|DIRECT|b]]です。",
    "my ssn is [[219-09-9999|CODE|DIRECT|a]] and the irs letter was sent to [[4417 W Olive Ave, Phoenix, AZ 85019|LOC|DIRECT|b]]. "
    "what does CP2000 mean?",
    "Our customer [[Dmitri Volkonsky|PERSON|DIRECT|a]] paid with [[5425 2334 3010 9903|CODE|DIRECT|b]]; "
    "the charge shows up as [[VOLKONSKY D|PERSON|DIRECT|a]]. Why?",
    "I uploaded the scan to https://drive.example.com/u/[[hkaradag|CODE|DIRECT|a]]/passport.pdf, my passport no is "
    "[[U12345678|CODE|DIRECT|b]]. Is it safe?",
    "fix my python: open(r'C:\\Users\\[[lena.vogt|CODE|DIRECT|a]]\\Desktop\\gehalt_2023.xlsx') throws FileNotFoundError",
    "AWS keeps rejecting [[AKIAQX3ZP7M2LBN5R8TW|CODE|DIRECT|a]] with secret "
    "[[w9Jx2Lq7Rz5Vn0Pk3Ty8Mb6Hc4Gd1Fs2Ea7Ub9Xo|CODE|DIRECT|b]], any idea?",
    "recommend a birthday gift for my boss [[olamide adeyemi-cole|PERSON|DIRECT|a]], she turns [[50|DEM|QUASI|b]] "
    "on [[3 June|DATETIME|QUASI|c]]",
    "Please proofread: 'Dear [[Dr. Haverbeke|PERSON|DIRECT|a]], following my visit on [[12 January 2024|DATETIME|QUASI|b]], "
    "my NHS number is [[943 476 5919|CODE|DIRECT|c]] and my postcode [[BS7 8QR|LOC|QUASI|d]].'",
    "Ayúdame con una reclamación: me llamo [[Ximena Casaus Bermejo|PERSON|DIRECT|a]], DNI [[12345678Z|CODE|DIRECT|b]], "
    "móvil [[612 34 56 78|CODE|DIRECT|c]].",
    "What's wrong with this curl? curl -H 'Authorization: Bearer [[ghp_R7tY2uI9oP3aS6dF1gH8jK4lZ0xC5vB2nM7q|CODE|DIRECT|a]]' "
    "https://api.github.com/repos/[[teodora-vulic|CODE|DIRECT|b]]/thesis",
    "Write a LinkedIn recommendation for [[Aarav Mehta-Krishnan|PERSON|DIRECT|a]] who worked with me at "
    "[[Quillon Robotics|ORG|QUASI|b]] in [[Pune|LOC|QUASI|c]].",
    "My car reg is [[LK19 XWD|CODE|DIRECT|a]] and I got a ULEZ charge for [[21 Feb 2024|DATETIME|QUASI|b]]. "
    "Appeal please, my name is [[Gethin Pryce|PERSON|DIRECT|c]].",
    "Συνέταξε μια επιστολή προς τον κ. [[Σταύρο Παπαδημητρίου|PERSON|DIRECT|a]], τηλέφωνο [[210 7712 345|CODE|DIRECT|b]].",
    "plan a 3-day trip to Lisbon for me and my partner [[joão|PERSON|DIRECT|a]]; our booking ref is "
    "[[QX7P2L|CODE|DIRECT|b]] and my email is [[jm.ferraz@sapo.pt|CODE|DIRECT|c]]",
    "The password for the shared drive is [[Bluebird!2291|CODE|DIRECT|a]] and the PIN is [[4471|CODE|DIRECT|b]]; "
    "rewrite this message so it sounds less rude.",
)
