//! Listings written in the languages US listings are most often written in besides English
//! (Spanish, Chinese, Vietnamese, Korean, Tagalog, Portuguese, French, German, Italian, Polish,
//! Russian, Arabic, Japanese, Hindi, Hebrew, Dutch, Greek, Turkish): the words that name people
//! by a protected class. The check does not parse these languages, so it cannot tell a
//! description from a preference around such a word; a sentence holding one is dropped, as an
//! English sentence still naming a class is. Words that describe a home ("sala familiar",
//! "accesible en silla de ruedas") are not listed; a refusal of what a home offers is
//! ("no se aceptan animales de servicio").

use super::phrases::{audience, Lawful, Rule, OLDER_PERSONS_HOUSING};
use super::Category::*;

/// A rule's words read inside a run of `$script` (a character class): scripts that put no space
/// between a word and what is joined to it (particles, prefixes, the next word).
macro_rules! in_run {
    ($script:literal, $words:literal) => {
        concat!($script, "*(", $words, ")", $script, "*")
    };
}

/// Japanese words run together with kana, so a word is read inside its run of kanji and kana.
macro_rules! japanese {
    ($words:literal) => {
        in_run!(r"[\p{Han}\p{Hiragana}\p{Katakana}]", $words)
    };
}

/// A Hebrew word, whole, with the letters Hebrew joins to its front: "ל" (to, for), "ה" (the),
/// "ו" (and), "ב" (in), "מ" (from), "ש" (that), and their pairs.
macro_rules! hebrew {
    ($words:literal) => {
        concat!("(?:ל|ה|ו|ב|מ|ש|לה|וה|של|שה|וב|ול|ומ|מה|בה)?(", $words, ")")
    };
}

/// The class words of other languages, by category.
pub(super) const OTHER_LANGUAGES: &[Rule] = &[
    audience(
        concat!(
            // Spanish: children, pregnancy, adults only, couples with or without children.
            r"niñ[oa]s|ni[nñ]os|hij[oa]s|beb[eé]s|embarazadas?|adolescentes|menores de (edad|\d+)|(no|sin) menores",
            r"|(se aceptan|aceptamos|se admiten|admitimos|se permiten|permitimos) menores",
            r"|(s[oó]lo|solamente|[uú]nicamente) (para )?adultos|adultos (s[oó]lo|solamente|[uú]nicamente)",
            r"|parejas (sin|con) hij[oa]s|reci[eé]n casad[oa]s|familias? (con|sin) (hij[oa]s|niñ[oa]s)|familias numerosas",
            // Portuguese.
            r"|crian[çc]as|filh[oa]s|beb[êe]s|gr[áa]vidas?|(somente|apenas|s[óo]) (para )?adultos|casais sem filhos|marido e (esposa|mulher)",
            // Vietnamese.
            r"|trẻ em|trẻ nhỏ|con nhỏ|em bé|con cái|có con|mang thai|có thai|gia đình (có|đông) (con|người)",
            // Tagalog.
            r"|mga bata|walang (anak|bata)|bata|buntis",
            // French.
            r"|enfants|bébés|femmes enceintes|poussettes|lits à barreaux",
            // German.
            r"|kinder|kinderlos(e|en|er|es)?|familien mit kindern|schwangere",
        ),
        FamilialStatus,
    ),
    audience(
        concat!(
            r"mujeres|hombres|se[ñn]oritas|caballeros|varones|damas|solteras|solteros",
            r"|(s[oó]lo|solamente) (para )?(chicas|chicos|mujer|hombre)|para (una )?(mujer|chica|se[ñn]orita|dama)|para (un )?(hombre|chico|caballero)",
            r"|mulheres|homens|mo[çc]as|rapazes",
            r"|phụ nữ|nữ giới|nam giới|đàn ông|đàn bà|con gái|con trai|chỉ (cho )?(nữ|nam)|(nữ|nam) (thuê|ở|độc thân)|đồng tính",
            r"|babae|lalaki|bakla|tomboy",
            r"|femmes|hommes",
            // German.
            r"|frauen|männer",
        ),
        Sex,
    ),
    // Housing for older persons says so in Spanish too ("comunidad para mayores de 55 años").
    Rule {
        lawful_context: OLDER_PERSONS_HOUSING,
        ..audience(
        concat!(
            r"personas mayores|adultos mayores|ancian[oa]s|jubilad[oa]s|tercera edad|j[oó]venes|gente (mayor|joven)",
            r"|idos[oa]s|aposentad[oa]s|terceira idade|jovens",
            r"|người già|người cao tuổi|người lớn tuổi|cao niên|người trẻ|thanh niên|lương hưu|nghỉ hưu",
            r"|matatanda|matanda|nakatatanda|kabataan",
            r"|personnes âgées|retraités|jeunes",
            // German.
            r"|senioren|rentner",
        ),
        Age,
        )
    },
    // One older person as the subject of a worry ("que una persona mayor no aguante"), not an
    // adult ("una persona mayor de edad"); a youthful atmosphere ("ambiente juvenil").
    Rule {
        lawful_context: OLDER_PERSONS_HOUSING,
        ..audience(
            r"(una|la|esa|cualquier) persona mayor (no|que|se|le|lo|la|pueda|podr[ií]a|tendr[ií]a|va)|ambiente juvenil",
            Age,
        )
    },
    audience(
        concat!(
            r"discapacitad[oa]s|discapacidad(es)?|minusv[aá]lid[oa]s|inv[aá]lid[oa]s|(personas|gente|inquilinos) en sillas? de ruedas|enferm[oa]s mentales|ciegos|sordos",
            r"|deficientes|defici[êe]ncias?|cadeirantes|doentes mentais|cegos|surdos",
            r"|khuyết tật|tàn tật|người (đi )?xe lăn|tâm thần|người mù|người điếc",
            r"|may kapansanan|kapansanan|pilay|bulag|bingi",
            r"|handicapés|personnes handicapées|pas de fauteuils? roulants?",
            // German.
            r"|behinderte|rollstuhlfahrer|(keine|nicht mit) (assistenzhunde?n?|assistenztiere?n?|blindenhunde?n?|blindenführhunde?n?|führhunde?n?|therapiehunde?n?|signalhunde?n?)",
        ),
        Disability,
    ),
    audience(
        concat!(
            r"hispan[oa]s|latin[oa]s|mexican[oa]s|extranjer[oa]s|inmigrantes|indocumentad[oa]s|ilegales|ciudadan[oa]s|ciudadan[ií]a",
            r"|raza|color de (la )?piel|piel (clara|blanca|oscura|morena)|gringos|g[üu]er[oa]s?",
            r"|que habl(en|an|e) (s[oó]lo |solamente |[uú]nicamente )?(ingl[eé]s|espa[ñn]ol)",
            r"|(pessoas|inquilinos|fam[íi]lias|moradores|gente) (brancas?|brancos|negr[oa]s|pret[oa]s)|estrangeir[oa]s|imigrantes|cor da pele|pele (clara|escura|branca|negra|morena)",
            r"|que fal(em|e) (somente |apenas )?ingl[êe]s|brasileir[oa]s",
            r"|người (việt|mỹ|hoa|tàu|trung quốc|mễ|mexico|da trắng|da đen|da màu|nước ngoài|ngoại quốc|châu á|châu phi|tây|ấn|hàn|nhật|bản xứ|nhập cư|gốc)",
            r"|da trắng|da đen|da màu|màu da|sắc tộc|chủng tộc|quốc tịch|dân tộc|di dân|nhập cư|(phải|cần|chỉ) (nói|biết|rành) tiếng",
            r"|maputi|mapuputi|kulay ng balat|dayuhan|intsik|bumbay|(pinoy|pilipino|filipino|puti|itim|negro|amerikano|kano) (lamang|lang)",
            r"|(lamang|lang) sa (mga )?(pinoy|pilipino|filipino|puti|itim|negro|amerikano|kano|intsik|bumbay)|lahi",
            // "Pinoy na tenant": a tenant described by an origin, Tagalog's adjective before "na".
            r"|(pinoy|pinay|pilipino|pilipina|filipino|filipina|puti|itim|amerikano|kano|intsik|bumbay) na (tenant|tenants|umuupa|uupa|nangungupahan|mangungupahan|boarder|bedspacer|renter|titira|pamilya)",
            r"|étrangers|immigrés|couleur de peau|nationalité|de souche",
            // German.
            r"|ausländer|migranten|staatsbürger|hautfarbe|nur (an|für) (deutsche|deutschen|einheimische)|(deutsch|englisch|russisch|polnisch|türkisch|spanisch|französisch|italienisch|arabisch)sprachig(e|en|er|es)?",
        ),
        RaceOrNationalOrigin,
    ),
    audience(
        concat!(
            r"cristian[oa]s|cat[oó]lic[oa]s|de fe (cat[oó]lica|cristiana|evang[eé]lica|jud[ií]a|musulmana)|carta del p[aá]rroco|evang[eé]lic[oa]s|jud[ií][oa]s|musulman(es|as)|creyentes|ateos|mormones|testigos de jehov[aá]",
            r"|crist[ãa]os|judeus|mu[çc]ulmanos|ateus",
            r"|công giáo|phật tử|đạo phật|phật giáo|tin lành|theo đạo|có đạo|hồi giáo|do thái|cơ đốc|thiên chúa giáo",
            r"|katoliko|kristiyano|iglesia ni cristo|nagsisimba|sumisimba|magsimba",
            r"|chrétiens|juifs|musulmans|catholiques|(de )?confession (chrétienne|catholique|protestante|juive|musulmane|israélite)",
            r"|(familles?|locataires?|personnes?|couples?|foyers?) (catholiques?|chrétien(ne)?s?|jui(f|ve|fs|ves)|musulman(e)?s?|protestant(e)?s?)",
            r"|(catholique|chrétienne|chrétien|juive|juif|musulmane|musulman|protestante|protestant)s? pratiquant(e)?s?",
            // German.
            r"|christen|muslime|juden|katholiken",
        ),
        Religion,
    ),
    // Spanish listings: a household of a people, children refused, one sex or household wanted.
    audience(
        r"(familias?|inquilinos?|personas?|gente|parejas?|compradores?) (hispan[oa]s?|latin[oa]s?|mexican[oa]s?|blanc[oa]s?|negr[oa]s?|american[oa]s?|chin[oa]s?|asi[aá]tic[oa]s?|cristian[oa]s?|cat[oó]lic[oa]s?|jud[ií][oa]s?|musulman[ae]s?)",
        RaceOrNationalOrigin,
    ),
    audience(
        r"(sin|no se aceptan|no aceptamos|no se permiten) (ni[nñ]os|hijos|bebes|bebés)|(solo|s[oó]lo) (adultos|parejas|solteros|solteras)",
        FamilialStatus,
    ),
    audience(r"(solo|s[oó]lo) (hombres|mujeres)", Sex),
    // Spanish and Portuguese listings: gay and lesbian tenants refused.
    audience(
        r"(no (aceptamos|se aceptan|alquilamos a|rentamos a|admitimos)|n[ãa]o (aceitamos|se aceitam|alugamos (a|para)|admitimos))[^.;,]{0,40}\b(homosexuales|homossexuais|gays?|gais|lesbianas|l[ée]sbicas|parejas del mismo sexo|casais do mesmo sexo)",
        Sex,
    ),
    // Spanish and Portuguese listings: service animals refused; Spanish: birthplace wanted.
    audience(
        concat!(
            r"(no se aceptan|no aceptamos|no se permiten|no permitimos|sin) (animales de (servicio|apoyo|asistencia)|perros (de (servicio|asistencia|apoyo)|gu[ií]a)|sillas de ruedas)",
            r"|n[ãa]o (aceitamos|se aceitam|permitimos|s[ãa]o (aceitos|permitidos))[^.;]{0,40}\b((c[ãa]o|c[ãa]es)[- ]guias?|(c[ãa]o|c[ãa]es|anima(l|is)) de (suporte|apoio|assist[êe]ncia|servi[çc]o))",
        ),
        Disability,
    ),
    audience(
        r"nacid[oa]s? en (los )?(estados unidos|ee\.? ?uu\.?|este pa[ií]s|m[eé]xico|am[eé]rica)|(solo|s[oó]lo) ciudadanos",
        RaceOrNationalOrigin,
    ),
    // Spanish: papers as a proxy for origin.
    audience(
        r"(con|sin|tengan|tenga) papeles|papeles (en regla|legales|al d[ií]a)|documentad[oa]s",
        RaceOrNationalOrigin,
    ),
    // Spanish: only people "from here", newcomers refused.
    audience(
        r"(s[oó]lo|solamente|[uú]nicamente) (para )?(gente|personas|inquilinos|familias) de aqu[ií]|(nada de|no|sin|ni) reci[eé]n llegad[oa]s|(gente|personas|inquilinos|familias|nadie|nada) [^.;]{0,20}\bde centroam[eé]rica|centroamerican[oa]s",
        RaceOrNationalOrigin,
    ),
    // Haitian Creole.
    audience(
        r"(ayisyen|ameriken|dominiken|blan|nwa)( yo)? s[eè]lman|s[eè]lman (pou )?(ayisyen|ameriken|dominiken|blan|nwa)",
        RaceOrNationalOrigin,
    ),
    // Tagalog: people with children, unless they are welcome ("pwede ang may anak": those with
    // children are fine).
    Rule {
        lawful_context: Lawful::in_sentence(&[
            "pwede ang may anak",
            "puwede ang may anak",
            "pwede rin ang may anak",
            "ok ang may anak",
            "okay ang may anak",
            "tanggap ang may anak",
            "welcome ang may anak",
        ]),
        ..audience(r"may (maliliit na |maliit na |mga )?(anak|bata)", FamilialStatus)
    },
    audience(r"(pa gen|pa vle|san|pa pou|pa aksepte) timoun|timoun pa (aksepte|pèmèt|gen dwa)", FamilialStatus),
    // Somali and Amharic: a people named as the ones wanted.
    audience(r"(kaliya|keliya) (dadka|qoysaska) \w+|dadka soomaalida", RaceOrNationalOrigin),
    audience(in_run!(r"\p{Ethiopic}", "ኢትዮጵያውያን|ኤርትራውያን"), RaceOrNationalOrigin),
    // Italian.
    // "Cameretta per i bambini": a child's bedroom, a room of the house.
    Rule {
        unless_within: &["cameretta per i bambini", "camera dei bambini", "cameretta dei bambini", "stanza dei bambini"],
        ..audience(
            r"bambin[ie]|figli|neonati|minorenni|minori|(soli|sole) adulti|incint[ae]|(solo|soltanto) (per )?adulti|coppie senza figli|senza (bambini|figli)",
            FamilialStatus,
        )
    },
    audience(r"(solo|soltanto) (per |a |alle |ai )?(donne|uomini|ragazze|ragazzi|signore|signori)|donne|uomini", Sex),
    audience(r"anziani|pensionati|giovani", Age),
    audience(r"disabili|handicappati|invalidi|malati mentali|sedia a rotelle", Disability),
    audience(
        r"stranieri|extracomunitari|immigrati|(solo|soltanto) (per )?italiani|italiani|cittadin(i|anza)|razza|colore della pelle|(persone|inquilini|famiglie) (bianch[ie]|ner[ie])",
        RaceOrNationalOrigin,
    ),
    audience(r"cristiani|cattolici|ebrei|musulmani|atei|praticanti", Religion),
    // Polish.
    audience(
        r"dzieci|dzieckiem|dziećmi|niemowl\w*|w ciąży|ciężarn\w*|(tylko|wyłącznie) (dla )?dorosłych|bez dzieci",
        FamilialStatus,
    ),
    audience(
        r"(tylko|wyłącznie) (dla )?(kobiet|mężczyzn|pań|panów|studentek|studentów)|kobiet(y|om)?|mężczyzn\w*",
        Sex,
    ),
    audience(
        r"emeryt\w*|(osób|osoby|osobom) starsz\w*|młodzież\w*|młod(ych|ym|e|zi) (osób|osobom|osoby|ludzi|ludziom|par|parom|najemców)|(osób|osoby|osobom|najemców|lokatorów) (do|poniżej|powyżej|od) \d\d lat",
        Age,
    ),
    // A home adapted for people with disabilities ("przystosowane dla osób z
    // niepełnosprawnościami") describes the property, as do a ramp, a lift or a parking space for
    // wheelchairs ("podjazd dla wózków inwalidzkich").
    Rule {
        lawful_context: Lawful::in_sentence(&[
            "przystosowan",
            "dostosowan",
            "podjazd",
            "pochylni",
            "winda dla",
            "windę dla",
            "miejsce parkingowe dla",
            "miejsca parkingowe dla",
            "łazienka dla",
            "udogodnienia dla",
        ]),
        ..audience(r"niepełnosprawn\w*|inwalid\w*|wózk\w* inwalidzk\w*", Disability)
    },
    audience(
        r"(tylko|wyłącznie) (dla )?(polaków|polek|polakom|obywateli|białych|czarnych)|(biał|czarn)(ych|ym|i) (najemc|lokator|osób|osob|rodzin)\w*|polaków|cudzoziem\w*|obcokrajowc\w*|imigrant\w*|obywatel(stwo|stwa)|kolor skóry|ras(a|y|ę)",
        RaceOrNationalOrigin,
    ),
    audience(r"katolik\w*|chrześcijan\w*|muzułman\w*|żyd(zi|ów|om)|wierząc\w*|ateist\w*", Religion),
    // Russian (Cyrillic has word boundaries; its endings change, so a stem is read).
    audience(
        r"дет(и|ей|ям|ьми)|ребён\w*|ребен\w*|младен\w*|беременн\w*|(только )?(для )?взрослых|без детей|семь(и|ям|ей) с детьми",
        FamilialStatus,
    ),
    audience(r"(только )?(для )?(женщин|мужчин|девушек|девушке|девушки|парней|парню)|женщин\w*|мужчин\w*", Sex),
    audience(r"пенсионер\w*|пожил\w*|молодёж\w*|молодеж\w*|молод(ым|ые|ых) (людям|семьям|парам)", Age),
    audience(r"инвалид\w*|колясоч\w*|психически\w* больн\w*", Disability),
    audience(
        r"славян\w*|русским|(только )?(для )?(русских|граждан)|иностран\w*|мигрант\w*|приезж\w*|гражданств\w*|национальност\w*|цвет кожи|кавказц\w*|азиат\w*|(без|нужна|с) регистраци\w*",
        RaceOrNationalOrigin,
    ),
    // "рядом с православным храмом": a church near the flat, named by its faith.
    Rule {
        unless_next: &[
            "храм", "храма", "храму", "храмом", "храме", "храмы", "храмами", "церковь", "церкви", "церковью", "собор",
            "собора", "собору", "собором", "соборе", "монастырь", "монастыря", "монастырём", "монастырем", "мечеть",
            "мечети", "мечетью", "синагога", "синагоги", "синагогу", "синагогой", "костёл", "костел", "костёлом",
            "костелом",
        ],
        ..audience(r"христиан\w*|православн\w*|мусульман\w*|евре\w*|католик\w*|верующ\w*|прихожан\w*", Religion)
    },
    // Arabic: prefixes ("the", "for the", "and") join the word, so a stem is read inside its word.
    audience(in_run!(r"\p{Arabic}", "أطفال|طفل|عائل|أسر|حامل|عزاب|متزوج"), FamilialStatus),
    audience(in_run!(r"\p{Arabic}", "نساء|رجال|سيدات|بنات|شباب"), Sex),
    audience(in_run!(r"\p{Arabic}", "مسلم|مسيحي|يهود|مسلمين|المسلمة"), Religion),
    // "Of the same sect / creed / faith".
    audience("نفس (الطائفة|المذهب|الدين|الديانة)", Religion),
    audience(in_run!(r"\p{Arabic}", "أجانب|أجنبي|جنسي|عرب|بيض|سود|مواطن"), RaceOrNationalOrigin),
    audience(in_run!(r"\p{Arabic}", "معاق|إعاقة|الاحتياجات الخاصة|كبار السن"), Disability),
    // Japanese.
    audience(japanese!("子供|子ども|お子様|乳児|妊婦"), FamilialStatus),
    audience(japanese!("女性|男性|女子|男子"), Sex),
    audience(japanese!("外国人|日本人|国籍"), RaceOrNationalOrigin),
    // "身体障害者補助犬は可": assistance dogs (their legal name) allowed.
    Rule {
        unless_within: &["身体障害者補助犬は可", "身体障害者補助犬可", "身体障害者補助犬のみ可", "身体障害者補助犬は歓迎"],
        ..audience(japanese!("高齢者|障害|障がい|車椅子"), Disability)
    },
    audience(japanese!("ご高齢の方|高齢の方"), Age),
    // Hindi.
    audience(in_run!(r"\p{Devanagari}", "बच्च|परिवार|गर्भवती"), FamilialStatus),
    audience(in_run!(r"\p{Devanagari}", "महिला|पुरुष|लड़कि|लड़के"), Sex),
    audience(in_run!(r"\p{Devanagari}", "मुस्लिम|मुसलमान|हिंदू|हिन्दू|ईसाई|सिख|शाकाहारी|जैन"), Religion),
    audience(in_run!(r"\p{Devanagari}", "विदेशी|जाति|गोरे|काले"), RaceOrNationalOrigin),
    audience(in_run!(r"\p{Devanagari}", "विकलांग|दिव्यांग|अपंग|मानसिक रोग|मानसिक रूप से बीमार"), Disability),
    audience(in_run!(r"\p{Devanagari}", "बुजुर्ग|वरिष्ठ नागरिक"), Age),
    // Hindi written in Latin letters, as rental posts in India often are.
    audience(r"videshi|videshiyon|(indian )?passport nahi|buzurg|sirf (young|jawan|naujawan)", RaceOrNationalOrigin),
    audience(r"bimaar|apahij|viklang|divyang|sirf fit log", Disability),
    // Ukrainian.
    audience(r"діт(и|ей|ям|ьми)|діток|дитин\w*|без дітей|вагітн\w*", FamilialStatus),
    audience(r"іноземц\w*|без акцент\w*|слов['’]ян\w*", RaceOrNationalOrigin),
    // Punjabi (Gurmukhi puts spaces between words, so each is a word of its own: "ਸਿੱਖਿਆ",
    // education, is not "ਸਿੱਖ", Sikh; a possessive names a place, "ਬੱਚਿਆਂ ਦਾ ਪਾਰਕ").
    audience("ਸਿ\u{a71}ਖਾਂ|ਸਿ\u{a71}ਖ|ਮੁਸਲਮਾਨਾਂ|ਮੁਸਲਮਾਨ|ਹਿੰਦੂਆਂ|ਹਿੰਦੂ|ਈਸਾਈ", Religion),
    audience("ਮੁੰਡਿਆਂ|ਮੁੰਡੇ|ਕੁੜੀਆਂ|ਕੁੜੀਆ|ਔਰਤਾਂ|ਮਰਦਾਂ", Sex),
    Rule { unless_next: &["ਦਾ", "ਦੀ", "ਦੇ"], ..audience("ਬੱਚੇ|ਬੱਚਿਆਂ", FamilialStatus) },
    // Farsi: words of their own, a plural joined by a zero-width non-joiner ("بچه\u{200c}ها").
    // "ایرانی" alone also names a style of toilet, "خارجی" an exterior, "اتاق بچه" a child's
    // room: the people are named by a plural, a couple or family, or "only".
    audience("بدون بچه|بچه\u{200c}ها|بچه\u{200c}دار|بدون فرزند|بدون کودک", FamilialStatus),
    audience(
        "ایرانی\u{200c}ها|افغانی\u{200c}ها|خارجی\u{200c}ها|اتباع|افغانی|(زوج|خانواده)\u{200c}های (ایرانی|افغانی)|(فقط|تنها) (به )?(ایرانی|افغانی)",
        RaceOrNationalOrigin,
    ),
    // Hebrew joins its prepositions, conjunction and article to the word ("למשפחה", for a
    // family), so a word may carry one of them, and is otherwise whole ("אנשים", people, holds
    // "נשים", women; "ערבים" is also guarantors, asked for in every Israeli lease).
    audience(
        hebrew!("ללא ילדים|בלי ילדים|לא ילדים|תינוקות|בהריון|הריון"),
        FamilialStatus,
    ),
    audience(
        hebrew!(
            "דתי|דתיים|דתית|דתיות|חרדי|חרדים|חרדית|חרדיות|שומרי שבת|שומר שבת|שומרת שבת|שומרות שבת|חילוניים|יהודים|יהודייה|יהודיה|משפחה יהודית|משפחות יהודיות|זוג יהודי|דייר יהודי|דיירים יהודים|מוסלמים|נוצרים"
        ),
        Religion,
    ),
    audience(hebrew!("זרים|עולים חדשים|צבע עור"), RaceOrNationalOrigin),
    audience(hebrew!("נשים|גברים|רווקות|רווקים|בחורות|בחורים"), Sex),
    audience(hebrew!("נכים|נכות|כיסא גלגלים|חולי נפש"), Disability),
    audience(hebrew!("קשישים|פנסיונרים|צעירים"), Age),
    // Greek: capitals and quick typing drop the accents, so each accented vowel is read with or
    // without it; people are named in the plural ("ορθόδοξους"), as "Ορθόδοξη εκκλησία" is a church
    // and "δωμάτιο παιδιών" a children's room.
    audience(r"παιδι[άα]|μωρ[άαόο]|[έε]γκυ(ος|ες)|(οικογ[έε]νει(ες|α)|ζευγ[άα]ρια?) (με|χωρ[ίι]ς) παιδι[άα]", FamilialStatus),
    audience(
        r"αλλοδαπ\w*|(μ[όο]νο )?(σε )?([έε]λληνες|ελλην[ίι]δες)|μετ[άα]ναστ\w*|ξ[έε]νους υπηκ[όο]ους|υπηκο[όο]τητα|χρ[ώω]μα δ[έε]ρματος",
        RaceOrNationalOrigin,
    ),
    audience(
        r"(μ[όο]νο )?(σε )?(γυνα[ίι]κες|γυνα[ίι]κα|[άα]νδρες|[άα]ντρες|φοιτ[ήη]τριες|φοιτ[ήη]τρια|κοπ[έε]λες|κοπ[έε]λα)",
        Sex,
    ),
    audience(
        r"ορθ[όο]δ[όο]ξ(ους|οι|ων)|μουσουλμ[άα]ν(ους|οι|ων)|χριστιαν(ο[ύυ]ς|ο[ίι]|[ώω]ν)|εβρα[ίι](ους|οι|ων)",
        Religion,
    ),
    audience(r"ηλικιωμ[έε]ν(ους|οι|ων)|συνταξιο[ύυ]χ(ους|οι|ων)", Age),
    // Turkish: suffixes join the word ("yabancılara", to foreigners), and Turkish typed without
    // its letters or in capitals ("YABANCILARA", "cocuklu") is read too; a children's playground
    // ("çocuk oyun alanı") is the property, so the bare word is not listed.
    audience(r"[çc]ocuklu(lar|lara)?( a[iİ]le\w*)?|[çc]ocuksuz\w*|bebekl[iİ]\w*|ham[iİ]le\w*|[çc]ocuk (kabul ed[iİ]lmez|kabul ed[iİ]lm[iİ]yor|[iİ]stenm[iİ]yor|olmaz|yasak\w*)", FamilialStatus),
    audience(r"yabanc[ıi](lar|lara|ya)|yabanc[ıi] (uyruklu\w*|k[iİ]rac[ıi]\w*)|(sadece|yaln[ıi]zca) t[üu]rk(lere|ler)|sur[iİ]yel[iİ](ler|lere)?|k[üu]rt(ler|lere)|arap(lar|lara)", RaceOrNationalOrigin),
    audience(r"(sadece|yaln[ıi]zca) (bayan|erkek|k[ıi]z)\w*|bayana|bayanlara|erke[ğg]e|erkeklere|(k[ıi]z|erkek) [öo][ğg]renc[iİ]\w*|(bayan|erkek) k[iİ]rac[ıi]\w*", Sex),
    audience(r"m[üu]sl[üu]man(lar|lara)?|hr[iİ]st[iİ]yan(lar|lara)?|yahud[iİ](ler|lere)?|alev[iİ](ler|lere)", Religion),
    // Dutch: "allochtonen" names people of foreign descent; a child's room ("kinderkamer") and a
    // wheelchair-accessible home ("rolstoeltoegankelijk") are the property.
    audience(
        r"allochto(on|nen)|buitenlanders|(alleen|uitsluitend) (voor )?(nederlanders|nederlandse (huurders|mensen|gezinnen)|autochtonen)|huidskleur",
        RaceOrNationalOrigin,
    ),
    audience(r"kinderen|zwanger\w*|baby['’]s|(alleen|uitsluitend) (voor )?volwassenen|stellen zonder kinderen", FamilialStatus),
    audience(r"(alleen|uitsluitend) (voor )?(vrouwen|mannen|meisjes|jongens|dames|heren)", Sex),
    audience(r"gehandicapten|rolstoelgebruikers|psychiatrische patiënten", Disability),
    audience(r"moslims|christenen|joden|gelovigen", Religion),
    audience(r"gepensioneerden|bejaarden|ouderen|jongeren", Age),
    // Swedish: Swedes or citizens only or preferred, no children. Foreigners welcome ("även
    // utlänningar", "utlänningar välkomna", "oavsett hudfärg") are not refused; a home adapted for
    // wheelchairs ("anpassad för rullstolsburna") is the property;
    // "kristna" is also an adjective ("den kristna förskolan").
    Rule {
        unless_before: &["även", "också", "oavsett"],
        unless_next: &["välkomna", "välkommen"],
        ..audience(
            r"(endast|bara|enbart) (till |för )?(svenskar|svenska (medborgare|hyresgäster|familjer|personer)|medborgare)|svenska (hyresgäster|familjer) (föredras|önskas)|invandrare|utlänningar|hudfärg",
            RaceOrNationalOrigin,
        )
    },
    audience(
        r"utan barn|inga barn|(inga|ej|inte) barnfamiljer|barnfri(a|tt)?|(endast|bara|enbart) (för |till )?vuxna|gravida",
        FamilialStatus,
    ),
    audience(r"(endast|bara|enbart) (för |till )?(kvinnor|män|tjejer|killar)", Sex),
    Rule {
        unless_next: &["kyrka", "kyrkan", "skola", "skolan", "förskola", "förskolan", "församling", "församlingen"],
        ..audience(r"muslimer|kristna|judar", Religion)
    },
    Rule {
        lawful_context: Lawful::in_sentence(&["anpassad", "anpassat", "anpassade"]),
        ..audience(r"rullstolsburna|funktionshindrade", Disability)
    },
    // Czech: Czechs only, foreigners or Roma refused ("nepřizpůsobiví" codes for Roma), no
    // children; typed with or without its accents. Foreigners welcome ("i pro cizince", "cizinci
    // vítáni") are not refused.
    Rule {
        unless_before: &["i", "také", "take", "též", "tez"],
        unless_next: &["vítáni", "vitani", "vítány", "vitany", "vítán", "vitan"],
        unless_within: &["i pro cizince", "také pro cizince", "take pro cizince", "i pro cizinky"],
        ..audience(
            r"(pouze|jen|výhradně|vyhradne) (pro )?(čechy|čechům|čecha|cechy|cechum|české občany|ceske obcany|občany čr|obcany cr)|cizinc\w*|cizinkám|cizinky|barva pleti|rom(ům|um|ové|ove)|nepřizpůsobiv\w*|neprizpusobiv\w*",
            RaceOrNationalOrigin,
        )
    },
    audience(
        r"bez (\w+ (a|ani|či|ci) )?(dětí|deti)|(žádné|zadne|nechceme) (děti|deti)|(pouze|jen|výhradně|vyhradne) (pro )?(dospěl|dospel)\w*|(těhotn|tehotn)\w*",
        FamilialStatus,
    ),
    audience(r"(pouze|jen|výhradně|vyhradne) (pro )?(ženy|ženám|zeny|zenam|muže|mužům|muze|muzum|studentky|slečnu|slečny|slecnu|slecny)", Sex),
    // Spanish: an assistance animal let in on a pet's deposit or fee ("Se aceptan animales de
    // servicio, pero con depósito de mascota").
    audience(
        r"animales de (servicio|asistencia|apoyo emocional)\b[^.;!?]{0,60}\b(con|pagan|pagar|paga|requieren|deben pagar|se cobra) (un |el |una |la )?(dep[oó]sito|cargo|tarifa|cuota|renta)",
        Disability,
    ),
    // German: no offspring. Spanish: papers and English asked of the tenant (the subjunctive:
    // "que hable bien el inglés"; "nuestro agente habla bien inglés" describes the agent).
    audience(r"ohne nachwuchs", FamilialStatus),
    audience(
        r"(que|quien|quienes) (ya )?(tenga|tengan) (sus |los )?papeles|papeles en regla|sin papeles|(hable|hablen) (muy )?bien (el )?ingl[eé]s|(hable|hablen) (un )?(buen|perfecto) ingl[eé]s",
        RaceOrNationalOrigin,
    ),
    // Chinese and Korean listings: a run of characters naming children, a sex, an age, a
    // people, skin, a faith or a disability. (Neither script puts a word boundary inside the
    // run, and Korean joins its particles to the word, so a rule reads the whole run.) A room or
    // a playground named for children is the home's ("婴儿房", a nursery; "儿童游乐场").
    audience(
        in_run!(r"\p{Han}", "小孩|孩子|(儿童|兒童)(?:[^房遊游]|$)|(婴儿|嬰兒)(?:[^房]|$)|怀孕|懷孕"),
        FamilialStatus,
    ),
    audience(in_run!(r"\p{Han}", "中国人|华人|白人|黑人|肤色|外国人|移民|亚洲人"), RaceOrNationalOrigin),
    // A language asked of the client, unless it is the one the agent or the office speaks ("我们的
    // 经纪人会说普通话": our agent speaks Mandarin).
    Rule {
        lawful_context: Lawful::in_sentence(&[
            "经纪人会",
            "經紀人會",
            "经纪人讲",
            "經紀人講",
            "代理人会说",
            "代理人會說",
            "房东会",
            "房東會",
            "业主会",
            "業主會",
            "工作人员会",
            "工作人員會",
            "我们会说",
            "我們會說",
        ]),
        ..audience(in_run!(r"\p{Han}", "普通话|普通話|国语|國語|说中文|說中文|讲中文|講中文"), RaceOrNationalOrigin)
    },
    audience(in_run!(r"\p{Han}", "基督徒|穆斯林|佛教徒|犹太人|天主教徒"), Religion),
    audience(in_run!(r"\p{Han}", "残疾|轮椅|精神病"), Disability),
    audience(in_run!(r"\p{Han}", "女生|男生|女性|男性|女士|男士|限女|限男"), Sex),
    audience(in_run!(r"\p{Han}", "老人|老年人|年轻人|退休人士"), Age),
    audience(
        concat!(
            in_run!(r"\p{Hangul}", "아이들|어린이|자녀|아동|유아|아기|애들|임산부|임신|신혼부부"),
            "|아이가? (있는|없는)"
        ),
        FamilialStatus,
    ),
    audience(in_run!(r"\p{Hangul}", "여성|여자|남성|남자"), Sex),
    audience(in_run!(r"\p{Hangul}", "노인|어르신|고령자|젊은"), Age),
    audience(
        concat!(in_run!(r"\p{Hangul}", "장애인|장애가|장애를|장애자|정신질환|정신병"), "|휠체어를? (타는|사용하는)"),
        Disability,
    ),
    audience(
        concat!(
            in_run!(
                r"\p{Hangul}",
                "백인|흑인|피부색|인종|외국인|이민자|국적|동양인|한국인|중국인|일본인|베트남인|히스패닉|영어만|억양"
            ),
            "|영어를? (잘 )?(하시는|하는|구사하는)",
            "|(한국|중국|일본|베트남|미국|외국|동양|서양|흑|백) ?(사람|분)들?(만|에게만| 우대|을 우대|를 우대)"
        ),
        RaceOrNationalOrigin,
    ),
    audience(
        concat!(
            in_run!(r"\p{Hangul}", "기독교|교인|천주교|불교|무슬림|이슬람|유대인"),
            "|교회에? 다니(시)?는|신자(만|분| 우대)"
        ),
        Religion,
    ),
];
