//! The phrase list, by protected category: what is rewritten, what drops its sentence, and the
//! words that name people by a class wherever they stand.

use super::Category;

/// What to do with a match.
#[derive(Clone, Copy, Debug)]
pub(super) enum Action {
    /// Put this in its place.
    Replace(&'static str),
    /// Drop the sentence (or list item) holding it.
    DropSentence,
}

/// One entry of the phrase list: a case-insensitive pattern, what to do with a match, and the
/// exceptions that make a match ordinary language.
pub(super) struct Rule {
    pub(super) pattern: &'static str,
    pub(super) category: Category,
    pub(super) action: Action,
    /// The match names a place whose proper name may follow ("Temple Beth El"): the capitalised
    /// words right after it belong to the finding.
    pub(super) takes_name: bool,
    /// The replacement when a relative clause follows ("perfect for families who love ..." reads
    /// "perfect for those who love ...").
    pub(super) before_clause: Option<&'static str>,
    /// Words that, right after the match, make it ordinary language ("exclusive right to sell",
    /// "Church Street", "a couple of cars").
    pub(super) unless_next: &'static [&'static str],
    /// The match is a word of its own: not the start of a compound ("family-sized") or of a
    /// possessive naming a room ("children's room").
    pub(super) whole_word: bool,
    /// The match names a building that directions may name as a landmark: not a finding when it
    /// is part of a proper name ("Temple Beth Shalom") or placed on a named street ("the church
    /// on Main Street").
    pub(super) landmark: bool,
    /// Words that, anywhere in the sentence holding the match, make it a lawful statement: a
    /// preference about smoking or pets, not people ("Nonsmokers preferred"); an age rule inside
    /// a housing-for-older-persons community ("a 55-and-older community").
    pub(super) lawful_context: Lawful,
    /// Words that, right before the match, make it ordinary language ("a painted lady" is a
    /// Victorian house, "a former church" a building).
    pub(super) unless_before: &'static [&'static str],
    /// Phrases that make a match starting inside them ordinary language, and only that match: the
    /// sellers' own family ("the sellers raised their kids here") excuses its own class word, not
    /// another one later in the sentence ("... and think it suits grown-ups more than kids");
    /// "previous owners, a retired" excuses "retired couple" in "the previous owners, a retired
    /// couple, added ...".
    pub(super) unless_within: &'static [&'static str],
    /// The match counts only where a phrase ends after it (a comma, a full stop, "and", "who"):
    /// "renting to another Korean." names a person, "another Korean restaurant" does not.
    pub(super) at_phrase_end: bool,
}

/// Words that make a match lawful, and how far they reach.
#[derive(Clone, Copy, Debug)]
pub(super) struct Lawful {
    pub(super) words: &'static [&'static str],
    /// The words reach the whole statement, the clauses a semicolon joins included (a
    /// community's legal status covers the rules stated after it); otherwise only their own
    /// sentence ("Nonsmokers preferred; Catholics only" is two).
    pub(super) whole_statement: bool,
}

impl Lawful {
    const NONE: Self = Self::in_sentence(&[]);

    pub(super) const fn in_sentence(words: &'static [&'static str]) -> Self {
        Self { words, whole_statement: false }
    }
}

const fn rule(pattern: &'static str, category: Category, action: Action) -> Rule {
    Rule {
        pattern,
        category,
        action,
        takes_name: false,
        before_clause: None,
        unless_next: &[],
        whole_word: false,
        landmark: false,
        lawful_context: Lawful::NONE,
        unless_before: &[],
        unless_within: &[],
        at_phrase_end: false,
    }
}

const fn replace(pattern: &'static str, category: Category, with: &'static str) -> Rule {
    rule(pattern, category, Action::Replace(with))
}

/// A "perfect for <people>" rule: its replacement, or "<adjective> for those" before "who ...".
const fn suits(pattern: &'static str, category: Category, with: &'static str) -> Rule {
    Rule { before_clause: Some("$1 for those"), ..rule(pattern, category, Action::Replace(with)) }
}

const fn drop_sentence(pattern: &'static str, category: Category) -> Rule {
    rule(pattern, category, Action::DropSentence)
}

/// Street and place words after which "Church", "Temple" or "Chapel" is part of a name.
const PLACE_NAMES: &[&str] = &[
    "pew",
    "pews",
    "bell",
    "bells",
    "chimes",
    "steeple",
    "steeples",
    "spire",
    "spires",
    "tower",
    "towers",
    "parking",
    "organ",
    "street",
    "st",
    "st.",
    "avenue",
    "ave",
    "ave.",
    "road",
    "rd",
    "rd.",
    "lane",
    "ln",
    "drive",
    "dr",
    "hill",
    "hills",
    "terrace",
    "university",
    "college",
    "square",
    "court",
    "ct",
    "way",
    "boulevard",
    "blvd",
    "park",
    "creek",
];

use Category::*;

/// The phrase list. Patterns are case-insensitive regular expressions matched on word boundaries;
/// a match right after a hyphen, or a "family" right after "single", is ignored ("single-family
/// home" and "single family neighborhood" name a property type; "a single mom" does not).
pub(super) const RULES: &[Rule] = &[
    // Familial status.
    suits(
        r"(perfect|ideal|great|wonderful) (for|with) ((a |the )?(growing |young |large )?(families|kids|children)|(a |the )(growing |young |large )?family)",
        FamilialStatus,
        "$1 for gatherings",
    ),
    replace(r"family[- ](friendly|oriented)", FamilialStatus, "welcoming"),
    replace(r"family (neighborhood|neighbourhood|community|street)", FamilialStatus, "$1"),
    Rule {
        unless_next: &["of"],
        ..suits(
            r"(perfect|ideal|great) (for|with) (a )?(young )?(couples?|singles|newlyweds)",
            FamilialStatus,
            "$1 for anyone",
        )
    },
    drop_sentence(r"no (children|kids|minors|infants|teenagers)", FamilialStatus),
    drop_sentence(r"(adults?|grown-?ups?|couples|singles)[- ]only", FamilialStatus),
    drop_sentence(
        r"(child|children|kid|kids|toddler|toddlers|baby|babies|infant|teen)[- ]?free|not suitable for (children|kids)",
        FamilialStatus,
    ),
    // "An active adult community operated under HOPA" is housing for older persons.
    Rule {
        lawful_context: OLDER_PERSONS_HOUSING,
        ..replace(r"adult (community|living|building|complex)", FamilialStatus, "$1")
    },
    // Age.
    suits(
        r"(perfect|ideal|great) for (empty[- ]nesters|retirees|seniors|the elderly|older (buyers|couples|people)|young professionals)",
        Age,
        "$1 for easy living",
    ),
    replace(r"empty[- ]nesters?", Age, "all buyers"),
    drop_sentence(r"no (seniors|retirees|elderly)", Age),
    drop_sentence(r"mature (adults|couples?|buyers|residents)", Age),
    replace(r"young (neighborhood|neighbourhood|community)", Age, "$1"),
    // Religion.
    Rule {
        takes_name: true,
        unless_next: PLACE_NAMES,
        ..replace(
            r"(walking distance|steps|minutes|close|near|nearby) (to|from|of)? ?(the |a )?((st\. |saint |[a-z'’]+ ){0,4})(church|cathedral|synagogue|mosque|temple|chapel)( grounds| campus| complex)?",
            Religion,
            "$1 $2 local landmarks",
        )
    },
    replace(
        r"(christian|catholic|jewish|muslim|protestant|mormon|hindu|sikh|buddhist) (home|community|neighborhood|neighbourhood|area|family|buyers?)",
        Religion,
        "$2",
    ),
    drop_sentence(r"no (christians|catholics|jews|muslims|mormons|atheists)", Religion),
    drop_sentence(r"(christians?|catholics?|jews|jewish|muslims?|mormons?|protestants?)[- ]only", Religion),
    // Disability.
    drop_sentence(r"no (wheelchairs?|handicapped|disabled|disabilities)", Disability),
    drop_sentence(r"not (suitable|suited|for) (for )?(the )?(handicapped|disabled|wheelchairs?)", Disability),
    drop_sentence(r"(able[- ]bodied|physically fit|must be able to climb)", Disability),
    drop_sentence(r"(no|without) (mentally ill|mental illness|psychiatric)", Disability),
    replace(r"handicap(ped)? accessible", Disability, "accessible"),
    // Race, colour, national origin.
    drop_sentence(
        r"(white|black|hispanic|latino|asian|african|mexican|chinese|indian|korean) (neighborhood|neighbourhood|community|families|buyers?|only)",
        RaceOrNationalOrigin,
    ),
    drop_sentence(r"english[- ](speaking )?(only|buyers?|tenants?|families)", RaceOrNationalOrigin),
    drop_sentence(r"no (immigrants|foreigners)", RaceOrNationalOrigin),
    Rule {
        unless_next: &["development", "design"],
        ..replace(
            r"(ethnic|integrated|homogeneous|traditional) (neighborhood|neighbourhood|community)",
            RaceOrNationalOrigin,
            "$2",
        )
    },
    // Sex.
    replace(r"bachelor(ette)? pad", Sex, "stylish home"),
    replace(r"man cave", Sex, "bonus room"),
    suits(
        r"(perfect|ideal|great) for (a )?(single )?(man|woman|men|women|gentleman|gentlemen|ladies|lady|bachelors?)",
        Sex,
        "$1 for anyone",
    ),
    drop_sentence(r"(men|women|males?|females?|ladies|gentlemen)[- ]only", Sex),
    drop_sentence(r"no (men|women|males|females)", Sex),
    // Steering.
    replace(r"safe (neighborhood|neighbourhood|community|area|street)", Steering, "established $1"),
    Rule {
        unless_next: &[
            "right",
            "rights",
            "right-to-sell",
            "right-to-list",
            "right-to-represent",
            "use",
            "listing",
            "agency",
            "agent",
            "access",
            "buyer",
            "seller",
        ],
        ..replace(r"exclusive", Steering, "distinctive")
    },
    replace(
        r"(desirable|good|nice|quality|better) (neighbors|neighbours|people|families|clientele)",
        Steering,
        "$1 surroundings",
    ),
    // "A private community pool" is the residents' own.
    Rule {
        unless_next: &[
            "pool",
            "pools",
            "clubhouse",
            "gym",
            "park",
            "beach",
            "dock",
            "garden",
            "gardens",
            "center",
            "room",
        ],
        ..replace(r"private community", Steering, "community")
    },
    drop_sentence(r"(restricted|selective) (community|neighborhood|neighbourhood|buyers?)", Steering),
];

/// The property words as an array, with `extra` words after them.
macro_rules! property_words {
    ($($extra:literal),* $(,)?) => {
        &[
            "degree",
            "degrees",
            "room",
            "rooms",
            "bedroom",
            "bedrooms",
            "bath",
            "bathroom",
            "playroom",
            "wing",
            "area",
            "gatherings",
            "gathering",
            "movie",
            "dinners",
            "suite",
            "grand",
            "apartment",
            "apartments",
            // A unit type ("a bachelor studio"), as HUD's advertising guidance reads "bachelor
            // apartment".
            "studio",
            "studios",
            "unit",
            "flat",
            "playground",
            "play",
            "museum",
            "hospital",
            "library",
            "park",
            "pool",
            "walk",
            "farm",
            "door",
            "access",
            "accessible",
            "kitchen",
            "cabinets",
            "cabinetry",
            "appliances",
            "walls",
            "trim",
            "interior",
            "exterior",
            "finishes",
            "brick",
            "marble",
            "tile",
            "countertops",
            "siding",
            "paint",
            "care",
            "oak",
            "hardware",
            "fixtures",
            "homework",
            "elevator",
            "country",
            "blocks",
            "years",
            "minutes",
            "miles",
            "months",
            "weeks",
            "days",
            "hours",
            "parking",
            "space",
            "spaces",
            "ramp",
            "ramps",
            "lift",
            "restaurant",
            "restaurants",
            "business",
            "businesses",
            "bakery",
            "market",
            "deli",
            "grocery",
            // A chain store ("the family dollar", written in lower case).
            "dollar",
            // Plants named after people ("bachelor's buttons", "lady's mantle").
            "buttons",
            "mantle",
            "slipper",
            "slippers",
            // Facilities and income named after people ("women's locker room", "child support").
            "locker",
            "lockers",
            "restroom",
            "restrooms",
            "changing",
            "splash",
            // Grounds and farms ("Grandma's rose garden", "a gentleman farmer's barn").
            "garden",
            "gardens",
            "barn",
            "farmer",
            // Events and kitchens named after people or a faith's practice ("baby showers",
            // "kosher cooking", an elevator's "Sabbath mode").
            "shower",
            "showers",
            "cooking",
            "sinks",
            "mode",
            // A household's keepsakes left in a house ("the kids' growth chart").
            "chart",
            "charts",
            $($extra,)*
        ]
    };
}

/// Rooms and things a household word describes rather than addresses ("family room", "the
/// children's wing", "a couple of cars"), and a diploma ("a bachelor's degree").
const PROPERTY_WORDS: &[&str] = property_words!();
/// The property words, and those that, right after a language ("Spanish-speaking", "fluent
/// Mandarin"), name who serves the client or what they are given, not who may live there.
const PROPERTY_AND_STAFF_WORDS: &[&str] = property_words!(
    "agent",
    "agents",
    "realtor",
    "realtors",
    "broker",
    "brokers",
    "associate",
    "associates",
    "staff",
    "team",
    "office",
    "personnel",
    "representative",
    "representatives",
    "reps",
    "interpreter",
    "interpreters",
    "translator",
    "translators",
    "leasing",
    "management",
    "manager",
    "managers",
    "concierge",
    "support",
    "service",
    "services",
    "assistance",
    "help",
    "showings",
    "tours",
);

/// The property words, and the places a faith's name may describe ("the Catholic high school",
/// "a Quaker meeting house").
const FAITH_PLACE_WORDS: &[&str] = property_words!(
    "meeting",
    "meditation",
    // A building's or an appliance's setting for a day of rest ("a Shabbat elevator", "ovens with
    // a Sabbath mode"): what the home has, not whom it is for.
    "elevator",
    "elevators",
    "lift",
    "lifts",
    "setting",
    "settings",
    "mode",
    "timer",
    "timers",
    "high",
    "school",
    "schools",
    "elementary",
    "academy",
    "college",
    "university",
    "hospital",
    "cemetery",
    "charities",
    "charity",
    "parsonage",
    "rectory",
    "manse",
    "meetinghouse",
    "convent",
    "butcher",
    "butchers",
    "grill",
    "cafe",
    "café",
    "shop",
    "shops",
    // A craft named after its makers' community ("an Amish dining set", "Amish-built cabinetry").
    "dining",
    "furniture",
    "table",
    "tables",
    "quilt",
    "quilts",
    "cabinetry",
    "built",
    "crafted",
    // A faith's holidays as the neighbourhood's events ("the Ramadan night bazaar", "the Diwali
    // lights festival").
    "festival",
    "festivals",
    "bazaar",
    "bazaars",
    "parade",
    "parades",
    "fair",
    "fairs",
    "celebration",
    "celebrations",
    "fireworks",
    "night",
    "nights",
    "lights",
    // A faith's place of worship is the place rule's to judge, with its exceptions ("a former
    // Lutheran church").
    "church",
    "churches",
    "chapel",
    "chapels",
    "cathedral",
    "temple",
    "temples",
    "synagogue",
    "synagogues",
    "mosque",
    "mosques",
    "gurdwara",
    "gurdwaras",
    "mandir",
    "mandirs",
);

/// A word or phrase that names people by a protected class (or codes for one), wherever it
/// stands in a sentence. It is what is left of a preference the rewrites above could not make
/// neutral ("Perfect for gatherings with kids", "Seniors will appreciate ...",
/// "Jewish families will feel at home"): the sentence holding it is dropped.
pub(super) const fn audience(pattern: &'static str, category: Category) -> Rule {
    Rule { unless_next: PROPERTY_WORDS, whole_word: true, ..drop_sentence(pattern, category) }
}

/// The audience words, by category.
pub(super) const AUDIENCE: &[Rule] = &[
    // An occupancy standard that counts an infant, as local codes do, is no preference. The
    // sellers' own family is their history ("the seller's grandparents built the house").
    Rule {
        unless_before: &[
            "seller's",
            "sellers'",
            "seller\u{2019}s",
            "sellers\u{2019}",
            "owner's",
            "owners'",
            "owner\u{2019}s",
            "owners\u{2019}",
            // Someone's own family ("a stair lift for his father", "the owner's late mother"), and
            // guests ("easy to host visiting grandparents").
            "his",
            "her",
            "late",
            "visiting",
            "my",
        ],
        lawful_context: Lawful::in_sentence(CHILDREN_PROVIDED_FOR),
        // Who vouches for an applicant ("a parent guarantor") and income counted ("child support"),
        // not who lives there.
        unless_next: property_words!("guarantor", "guarantors", "support"),
        unless_within: &[
            // The writer's own family ("our growing family needs more room").
            "our growing family",
            "our family of",
            "my family of",
            "our young family",
            "our large family",
            "our whole family",
            // The sellers' own history: "the sellers raised three kids here" (not "we raised
            // the price, so it suits a buyer without kids").
            "raised our kids",
            "raised our children",
            "raised our family",
            "raised their kids",
            "raised their children",
            "raised their family",
            "raised my kids",
            "raised two kids",
            "raised three kids",
            "raised four kids",
            "raised five kids",
            "raised two children",
            "raised three children",
            "raised four children",
            "raised five children",
            "raised their two kids",
            "raised their three kids",
            "raised their four kids",
            "raised their two children",
            "raised their three children",
            "raised their four children",
            "closer to their grandkids",
            "closer to their grandchildren",
            "closer to their kids",
            "closer to their children",
            "brought both our babies home",
            "brought our babies home",
            "brought our baby home",
            // A house's past told by its owners' family ("this house was the family's home for
            // twenty years").
            "was the family's home",
            "was the family\u{2019}s home",
            "been the family's home",
            "been the family\u{2019}s home",
            // HUD's definition of an elderly household (Section 202): "the head, spouse, or sole
            // member is 62 or older".
            "head, spouse, or sole member",
            "head, spouse or sole member",
            // The sellers described: "the previous owners, a retired couple, added ...".
            "the sellers, a retired couple",
            "previous owners, a retired couple",
            "original owners, a retired couple",
            "current owners, a retired couple",
            "the sellers, a young couple",
            "the owners, a young couple",
            "previous owners, a young couple",
            "original owners, a young couple",
            "current owners, a young couple",
            "the sellers, a couple",
            "the owners, a couple",
        ],
        ..audience(
            r"((a|the|your|their) )?(famil(y|ies)|household) of (two|three|four|five|six|seven|eight|\d+)|kid[sz]?|child|children|little ones|toddlers?|infants?|bab(y|ies)|teens|teenagers?|youngsters|grandkids|grandchildren|newlyweds?|couples?|singles|moms?|mums?|dads?|mothers?|fathers?|parents?|grandparents|grandmas?|grandpas?|families|((a|the|your|their) )?(growing|young|large|big|small|whole|new|starter) family|(a |the |your |their )?(growing|expanding) households?|(a|the|your|their) family|pregnant|expectant( (women|mothers|parents|couples?|tenants))?|expecting (a baby|a child|a little one|mothers?|parents|couples?|women)|are you expecting|custody|pregnancy|(married|unmarried|engaged) (people|persons|tenants|buyers|couples?)|husbands?|wives|wife|spouses?|honeymooners|kiddos|kiddies|kds|dinks?|double[- ]income,? no (kids|children)|childless|(suited|suitable|ideal|perfect|meant|designed|best) (to|for) (one|two|one or two|1|2|1 or 2|1-2|a single|a couple of) (people|persons?|occupants|residents|adults)",
            FamilialStatus,
        )
    },
    // A "senior center" is a place; so are a "senior home" and a "retirement community club".
    Rule {
        lawful_context: OLDER_PERSONS_HOUSING,
        unless_next: NAMED_THINGS,
        // "The seller has retired": the owner's news, not a buyer wanted. An applicant over 18 is
        // one of age to sign a lease, which screening may ask ("each applicant over 18").
        // "Leaseholders must be legal adults": of age to sign, as above.
        unless_before: &["has", "have", "had", "owner", "owners", "seller", "sellers", "legal"],
        unless_within: SELLERS_DESCRIBED,
        ..audience(
            r"senior citizens?|seniors?|retirees?|(recently |newly |semi-)?retired|retirement (years|age)|elderly|millennials|young professionals?|young (people|persons|buyers|tenants|crowd|residents|couples?)|youthful (buyers|tenants|residents|crowd|people)|golden[- ]agers|golden years|twenty-?somethings|thirty-?somethings|(older|mature|elderly|senior|aging|ageing|younger) (people|persons?|adults|buyers?|tenants?|renters?|applicants?|occupants?|residents?|couples?|folks|generation)|oldsters|old[- ]timers|old (people|folks|ladies|men)|geezers|(baby )?boomers|college[- ]aged?|(tenants?|renters?|buyers?|residents?|occupants?|people|persons?|anyone|someone|those|no one|nobody) (under|over|below|above|younger than|older than|aged?) (the age of )?\d\d\b|applicants? (under|over|below|above|younger than|older than|aged?) (the age of )?(1[0-79]|[2-9]\d)\b|adults|over[- ]?(40|50|55|60|62|65)s?|(40|50|55|60|62|65)\+ ?(buyers|tenants|residents|crowd|people|folks|community|only|preferred)|(50|55|62) (and|or) (older|over|up)|age (limits?|caps?|maximums?|max|ceilings?)( of| is| at)? (1[0-79]|[2-9]\d)\b|(maximum|max|upper) age( limit)?( of| is)? (1[0-79]|[2-9]\d)\b|on the younger side",
            Age,
        )
    },
    // "A leap of faith" is a figure of speech; "the Catholic high school", "a Quaker meeting
    // house" are places; an office's closing days name holidays, not who may live there ("closed
    // on Christmas Day, Eid al-Fitr and Yom Kippur").
    Rule {
        unless_before: &["leap"],
        unless_next: FAITH_PLACE_WORDS,
        lawful_context: Lawful::in_sentence(&[
            "office is closed",
            "office will be closed",
            "offices are closed",
            "office closes",
            "office closed",
            "closed on",
            "closed for",
        ]),
        ..audience(
            r"christians?|catholics?|jews|jewish|muslims?|islamic|mormons?|hindus?|sikhs?|buddhists?|protestants?|baptists?|methodists?|lutherans?|presbyterians?|episcopal(ians?)?|pentecostals?|evangelicals?|quakers?|amish|atheists?|agnostics?|church-?goers|church-?going|(attends?|attending|goes to|go to) (church|mass|temple|synagogue|mosque|services)|non-?believers|parishioners|congregation|kosher|halal|(observant|orthodox|devout|practicing|practising) (jews|jewish|christians?|catholics?|muslims?|hindus?|families|family|buyers|tenants|residents|people)|believers|born[- ]again|lds|latter[- ]day saints?|ward house|stake center|bible[- ](study|studies|belt|believing)|sunday school|hebrew school|yeshivas?|madrass?as?|(sunday|saturday|friday|weekly|morning|evening) (services?|mass|worship|prayers?|fellowship|devotions?|devotionals?|vespers|bible (study|studies|class))|prayer (groups?|meetings?|circles?)|ramadan|diwali|passover|hanukk?ah|chanukk?ah|rosh hashanah|yom kippur|non-?christians?|gentiles?|heathens?|pagans?|infidels?|jehovah'?s witness(es)?|scientologists?|wiccans?|(same|shared|our|his|her|their) (values and )?(faith|beliefs?)|god-?fearing|(of|your|our|their|the same|shared) (faith|religion)|(of|in) (the|our|your|their) (faith|religion)|faith-based|(shares?|sharing) (your|our|their|the same) (values|faith|beliefs)|eruv|sabbath|shabbat",
            Religion,
        )
    },
    // Staff described ("specially trained caregivers", "our caregivers") serve the residents.
    Rule {
        unless_before: &[
            "trained",
            "licensed",
            "certified",
            "professional",
            "experienced",
            "qualified",
            "dedicated",
            "our",
            "staff",
        ],
        lawful_context: Lawful::in_sentence(DISABILITY_PROVIDED_FOR),
        // A room's use named among others ("a home office, or a live-in caregiver").
        unless_within: &["or a live-in caregiver", "for a live-in caregiver", "or a live-in care-giver"],
        ..audience(r"care-?givers?", Disability)
    },
    // "Gardening addicts" are keen gardeners. A pet rule that exempts assistance animals for
    // people with disabilities grants what the law asks.
    Rule {
        unless_before: &["gardening", "coffee", "fitness", "shopping", "adrenaline", "gym", "news", "sports"],
        lawful_context: Lawful::in_sentence(DISABILITY_PROVIDED_FOR),
        ..audience(
            r"handicapped|disabled|disabilit(y|ies)|wheelchair[- ](users?|bound)|in a wheelchair|the blind|blind (people|persons|tenants)|deaf|mentally ill|crippled|invalids?|able[- ]bodied|(physically|mentally) (fit|able|capable|healthy|sound|stable)|healthy,? (active )?(people|persons|tenants|buyers|adults|residents)|mobility (issues|problems|impairments?|limitations)|(uses?|using|with) (a |an )?(walkers?|canes?|crutches)|(mental|psychiatric) (health )?(issues|problems|conditions|illness|history)|in recovery|recovering (addicts|alcoholics)|addicts?|alcoholics|sober living|special needs|(home )?health aides?|nursing aides?|personal care (aides?|attendants?)|live-in (aides?|nurses?)|(must|able to|can) live independently|(service|assistance|support|therapy|guide|seeing[- ]eye) (animals?|dogs?) (not|are not|aren't) (allowed|permitted|accepted)|(no|without) (service|assistance|emotional[- ]support|support|therapy|guide|seeing[- ]eye) (animals?|dogs?)",
            Disability,
        )
    },
    // "Soft whites and deep blacks" are paint colours. The languages the agents or the office
    // speak describe the service, not who may live there ("English- and Spanish-speaking
    // agents available").
    Rule {
        unless_before: &[
            "soft", "warm", "crisp", "bright", "cool", "deep", "off", "creamy", "clean", "pure", "rich", "matte",
            "agents", "agent", "staff", "team", "we",
        ],
        unless_next: PROPERTY_AND_STAFF_WORDS,
        ..audience(
            r"whites|blacks|hispanics|latinos|latinas|asians|caucasians|orientals|immigrants|foreigners|(foreign|native|american|u\.?s\.?|us)-born|minorities|(must )?speak english|(fluent|native) (english|spanish)|(english|spanish)[- ]speak(ing|ers)|(american|u\.?s\.?) citizens?|citizens only|citizenship|(must|need to|needs to|have to|has to|got to|required to|should) be (a |an )?(legal |naturali[sz]ed )?citizens?\b|green[- ]cards?|(work|student|tourist) visas?|visa (holders|status)|immigration status|undocumented|illegals|nationality|colou?reds|(people|persons?|tenants|buyers|families|folks|applicants?|renters?|residents?|clients?|customers?|callers?|neighbou?rs|occupants?) of colou?r|non-?whites?|mixed[- ]race|biracial|racial(ly)?|(same|different|other|certain|particular) (race|races|ethnicity|ethnicities|skin colou?r|nationality)|(fair|fairer|light|lighter|dark|darker|pale|paler|olive|white|black|brown|browner)[- ](complexion(ed)?|complected|skin(ned)?)|(with|has|have|having) (fair|fairer|light|lighter|dark|darker|pale|paler|olive|brown) skin|complexions?|skin (colou?r|tone)|(heavy|thick|strong|foreign|noticeable) accents?|without an? accent|(of|with) [a-z]+ (heritage|descent|ancestry|extraction|blood)|national origin|ethnicity|ancestry|heritage (buyers|families|residents)|(mostly|predominantly|largely|primarily|all|majority)[- ](white|black|hispanic|latino|asian|african[- ]american|mexican|chinese|indian|korean|european|caucasian|jewish|christian|muslim)(-americans?)?|(white|black|hispanic|latino|asian|african|mexican|chinese|indian|korean|irish|italian|polish|european|caucasian|ethnic|oriental|american|anglo) (neighborhood|neighbourhood|community|families|family|buyers?|tenants|residents|people|enclave|households?|persons?|part of town|side of town|population)",
            RaceOrNationalOrigin,
        )
    },
    // "A painted lady" is a Victorian house, "a maintenance man" a job.
    Rule {
        unless_before: &["painted", "maintenance", "handy", "delivery", "repair", "service"],
        ..audience(
            r"men|women|woman|man|ladies|lady|gentlemen|gentleman|males?|females?|bachelors?|bachelorettes?|girlfriends?|boyfriends?|girls?|boys?|guys?|gals?|fellas?|dudes|blokes|lads|sorority|fraternity|trans|transgender|transsexuals?|non-?binary|genderqueer|gays?|lesbians?|queer|bisexuals?|lgbtq?\+?|homosexuals?|heterosexuals?|straight (couples?|people|tenants|renters|buyers|men|women)|sexual orientation|gender identity|(single|working) (gal|guy|woman|man|mom|dad|mother|father|parent)s?|(he|she) will (love|enjoy|appreciate)",
            Sex,
        )
    },
    audience(
        r"(right|better|good|certain|our|your|same|different|other|that|those|these) (kind|sort|type|crowd)s? of (people|neighbors|neighbours|families|buyers|tenants|folks)|(uniform|homogeneous|homogenous|monocultural) (crowd|bunch|group|mix|neighbou?rs|street|block|population|area|residents)|the right (crowd|people|element)|(safe|safest|crime[- ]free)[, ]+(and )?(crime[- ]free |quiet )?(neighborhoods?|neighbourhoods?|communit(y|ies)|areas?|streets?|locations?|blocks?|parts? of town)|like[- ]minded|(no|without|not accepting) (section[- ]8|vouchers|housing (choice )?vouchers|welfare|ssi|ssdi|food stamps|government assistance|public assistance|rental assistance|housing assistance|subsidies|subsidized tenants)|(vouchers?|section[- ]8|subsidies|rental assistance) (are |is )?not (accepted|allowed|welcome|taken)",
        Steering,
    ),
    // Child support refused as income: a household with children turned away ("welfare, child
    // support or alimony won't count toward rent"); counted, it is income like any other.
    audience(
        r"child support\b[^.;]{0,40}\b(won't|will not|doesn't|does not|do not|don't|cannot|can't|not) (count|counts|qualify|be counted|be considered|be accepted|accepted|considered)|(no|not accepting|don't accept|do not accept|won't accept|will not accept|excluding|excludes?|except) ([a-z,]+ ){0,4}child support",
        FamilialStatus,
    ),
    // Places of worship named as a draw ("close to several Baptist churches", "a Korean church next
    // door"), unless they are part of a street or institution's name ("Church Street").
    Rule {
        unless_next: PLACE_NAMES,
        whole_word: true,
        landmark: true,
        unless_before: &["former", "converted", "old", "historic", "renovated", "restored", "deconsecrated"],
        // Places of worship of every faith, named together: no faith is the draw.
        lawful_context: Lawful::in_sentence(&[
            "many faiths",
            "all faiths",
            "every faith",
            "many denominations",
            "now used as",
            "repurposed",
            "turned into",
            "converted into",
            "converted to",
            "was converted",
            "originally built",
            "all denominations",
            // A chapel the property has, among its amenities: what it is, not whom it is for.
            "with chapel",
            "with a chapel",
            "on-site chapel",
            "onsite chapel",
            "private chapel",
            "wedding chapel",
            "chapel on site",
            "chapel on-site",
            "chapel on the grounds",
            // The sellers' story ("the sellers met at the synagogue down the street and were
            // married in the garden").
            "were married",
            "got married",
            "sellers met",
            "owners met",
            // A room the home has, set up as a chapel: what it is used as now.
            "home chapel",
            "set up as a chapel",
            "used as a chapel",
            "amenities include a chapel",
            "amenities including a chapel",
            "amenities such as a chapel",
        ]),
        ..drop_sentence(r"churches|church|synagogues?|mosques?|temples?|chapels?", Religion)
    },
];

/// The house-style rule, applied when the policy asks for it.
pub(super) const MASTER: Rule =
    replace(r"master (bedroom|bed|bath|bathroom|suite|closet|retreat)", HouseStyle, "primary $1");

/// Statements inside a housing-for-older-persons community, where an age rule is lawful (42
/// U.S.C. 3607(b)): "a 55-and-older community", "HOPA".
pub(super) const OLDER_PERSONS_HOUSING: Lawful = Lawful { words: OLDER_PERSONS_WORDS, whole_statement: true };

const OLDER_PERSONS_WORDS: &[&str] = &[
    // Spanish: "comunidad para mayores de 55 años", "vivienda para personas mayores" (HOPA's
    // name); "mayores de 55" alone may refuse them ("no se aceptan personas mayores de 55").
    "comunidad para mayores de",
    "comunidad de mayores de",
    "vivienda para personas mayores",
    "viviendas para personas mayores",
    "55 and older",
    "55-and-older",
    "55 and over",
    "55-and-over",
    "55+",
    "62 and older",
    "62-and-older",
    "62 and over",
    "62-and-over",
    "hud-designated",
    // HUD's Section 202 program houses very-low-income elderly households.
    "section 202",
    "62+",
    "hopa",
    "intended and operated for occupancy by",
    "housing for older persons",
    "age-restricted",
    "age restricted",
    "age-qualified",
    // Housing for older persons named by its kind ("the senior building", "a senior community").
    "senior community",
    "senior communities",
    "senior building",
    "senior housing",
    "senior apartments",
    "senior apartment",
    "senior complex",
    "senior living community",
    "senior living communities",
    "senior living apartments",
    "senior living residence",
    "senior living facility",
];

/// A person or a group of people, as a listing names whom it is for.
macro_rules! people {
    () => {
        r"(people|persons?|folks|tenants?|renters?|applicants?|buyers?|residents?|occupants?|famil(y|ies)|households?|neighbou?rs|crowd|individuals?|professionals?|couples?|men|women|man|woman|females?|males?|guys?|gals?|girls?|boys?|kids?|children|students?|roommates?|housemates?|homeowners?|owners?|landlords?|communit(y|ies)|enclaves?|congregations?|patients|types|clientele|clients?|customers?|prospects?|callers?|leads|walk-ins|visitors|inquirers|nurses?|doctors?|physicians?|workers?|engineers?|employees?|teachers?|nann(y|ies)|expats?|nationals)"
    };
}

/// Words for race and colour that describe people (only before a word for people: "white
/// tenants", not "white cabinets").
macro_rules! race {
    () => {
        r"(white|black|brown|colou?red|hispanic|latin[oax]|asian|caucasian|african[- ]american|afro[- ][a-z]+|native american|indigenous|pacific islander|arab|middle[- ]eastern|biracial|mixed[- ]race|ethnic|minority|non-?white|(pale|fair|dark|light|brown|olive)[- ]skinned)"
    };
}

/// Nationalities, ancestries and languages that describe people.
macro_rules! origin {
    () => {
        r"(mexican|chinese|indian|korean|japanese|vietnamese|filipino|thai|irish|italian|polish|german|russian|ukrainian|french|greek|portuguese|brazilian|puerto rican|cuban|dominican|haitian|jamaican|nigerian|somali|ethiopian|pakistani|bangladeshi|iranian|persian|afghan|syrian|lebanese|turkish|armenian|european|scandinavian|swedish|norwegian|dutch|british|english|scottish|anglo|south asian|east asian|caribbean|west indian|hmong|cambodian|laotian|salvadoran|guatemalan|honduran|colombian|venezuelan|peruvian|[a-z]+-american|american|foreign|immigrant|gypsy|romani|spanish|arabic|hebrew|hindi|urdu|mandarin|cantonese|tagalog|punjabi|creole|kenyan|kikuyu|kalenjin|luhya|kamba|maasai|somalian|zulu|xhosa|afrikaner|maori|pakeha|pasifika|samoan|tongan|fijian|malay|malaysian|singaporean|indonesian|prc|marathi|gujarati|tamil|telugu|bengali|malayali|kannadiga|sindhi|bihari|nepali|sri lankan|scots)"
    };
}

/// Religions and religiosity that describe people.
macro_rules! faith {
    () => {
        r"(christian|catholic|jewish|muslim|islamic|hindu|sikh|buddhist|mormon|lds|protestant|baptist|methodist|lutheran|presbyterian|evangelical|pentecostal|orthodox|born[- ]again|devout|religious|secular|atheist|agnostic|god[- ]fearing|church[- ]?going|observant|pious|amish|mennonite|quaker|parsi|zoroastrian|shia|shiite|sunni|hasidic|haredi|coptic|adventist)"
    };
}

/// Race, origin or faith: one word of any of them.
macro_rules! race_origin_or_faith {
    () => {
        concat!(race!(), "|", origin!(), "|", faith!())
    };
}

/// A class a person is asked about or described by: race, origin, faith, sex or disability.
macro_rules! class_of_a_person {
    () => {
        concat!(race_origin_or_faith!(), "|", sex!(), "|", ability!())
    };
}

/// Words naming a race, an origin or a faith, as a regular expression's alternatives.
pub(super) const CLASS_WORDS: &str = race_origin_or_faith!();

/// Ages and generations that describe people.
macro_rules! age {
    () => {
        r"(young|younger|older|elderly|aged|retired|senior|mature|middle[- ]aged|youthful|twenty-?something|thirty-?something|millennial|boomer|gen[- ]?[xyz]|teenage|underage|adult)"
    };
}

/// Sex, gender identity, orientation and marital status framed by them.
macro_rules! sex {
    () => {
        r"(female|male|straight|gay|lesbian|queer|trans|transgender|cisgender|bisexual|pregnant|expectant|divorced|widowed|unmarried|married)"
    };
}

/// Disability, health and sobriety that describe people.
macro_rules! ability {
    () => {
        r"(disabled|handicapped|deaf|blind|able[- ]bodied|sane|sober|autistic|mentally (ill|stable|sound)|crippled|special[- ]needs)"
    };
}

/// An assistance animal by its kind ("service dog", "emotional support animal", "guide dog").
macro_rules! assistance_animal {
    () => {
        r"(service|assistance|support|emotional[- ]support|guide|therapy|seeing[- ]eye) (animals?|dogs?|cats?)"
    };
}

/// Papers or schooling the law does not ask of an assistance animal: a registry, a certificate,
/// a trainer.
macro_rules! animal_credentials {
    () => {
        r"(registered|certified|(listed )?(on|in) a (national |official |state )?(registry|register|database)|trained by)"
    };
}

/// One or more words of a class joined by "or", "and", "/" or commas, then a word for people
/// ("Black or Hispanic applicants"); `between` may stand before the people ("Spanish speaking").
macro_rules! class_then_people {
    ($class:ident) => {
        class_then_people!($class, "")
    };
    ($class:ident, $between:literal) => {
        concat!($class!(), r"((,| or| and| and/or| &|/) ", $class!(), r")*[- ]", $between, people!())
    };
}

/// Words that, right after "<class> family" and the like, name a thing, not people ("an Italian
/// family restaurant", "a Korean community center").
const NAMED_THINGS: &[&str] = &[
    "club",
    "clubs",
    "shuttle",
    "shuttles",
    "home",
    "homes",
    "house",
    "houses",
    "farm",
    "restaurant",
    "restaurants",
    "business",
    "businesses",
    "style",
    "market",
    "center",
    "centre",
    "festival",
    "heritage",
    "museum",
    "cemetery",
    "school",
    "club",
    "room",
    "rooms",
    "garden",
    "pool",
    "swim",
    "acres",
    "years",
    "feet",
    "miles",
    "minutes",
    "homes",
    "units",
    "trees",
    "percent",
    "pounds",
    "lbs",
    "lb",
    "kg",
];

/// Units after a number that make it a measure, not an age ("no older than 10 years", "25 to
/// 35 minutes").
const MEASURES: &[&str] =
    &["years", "months", "days", "minutes", "hours", "feet", "ft", "miles", "acres", "inches", "percent"];

/// People described by a class ("Black or Hispanic applicants", "an LDS family", "a nice Asian
/// girl"): one or more class words joined by "or", "and", "/" or commas, right before a word for
/// people.
const fn described(pattern: &'static str, category: Category) -> Rule {
    Rule { unless_next: NAMED_THINGS, whole_word: true, ..drop_sentence(pattern, category) }
}

/// A rule dropped unless the sentence says something lawful about who may live there (smoking,
/// pets, credit, income, the lease): "Nonsmokers preferred", "We do not rent to smokers".
const fn unless_lawful(pattern: &'static str, category: Category) -> Rule {
    Rule { lawful_context: Lawful::in_sentence(LAWFUL_SCREENING), whole_word: true, ..drop_sentence(pattern, category) }
}

/// Words that make naming a disability part of what the law asks: an assistance animal exempted
/// from a pet rule, a reasonable accommodation or modification offered, a fixture installed on
/// request, documentation asked for only where a disability is not obvious (each refused, "no
/// reasonable accommodation", does not count).
const DISABILITY_PROVIDED_FOR: &[&str] = &[
    "except assistance",
    "except service",
    "except for assistance",
    "except for service",
    "exempt",
    "with the exception of",
    "excluding assistance",
    "excluding service",
    "other than assistance",
    "other than service",
    "reasonable accommodation",
    "reasonable modification",
    // An accommodation offered as a question ("Need an accommodation for a disability? Call
    // us"); only the question, since "anyone who'd need an accommodation ... should look
    // elsewhere" and "we can't make an accommodation for" refuse one.
    "need an accommodation?",
    "need a modification?",
    "need an accommodation for a disability?",
    "need a modification for a disability?",
    "on request",
    "upon request",
    "let us know",
    "just ask",
    "can request it",
    "may request it",
    "are installed for",
    "already has",
    "already have",
    "have been installed for",
    "not obvious",
    "isn't obvious",
    "isn\u{2019}t obvious",
    "not readily apparent",
    "isn't readily apparent",
    // An assistance animal let in under a pet rule ("Assistance animals, including emotional
    // support animals, are not considered pets and are permitted with an approved request").
    "are not considered pets",
    "aren't considered pets",
    "are not pets",
    "aren't pets",
    // Alerts made to be seen rather than heard, described for who they serve ("flashing smoke
    // detectors, great for deaf residents").
    "flashing",
    "strobe",
    "visual alert",
    "visual alarm",
];

/// Words that waive a deposit or fee for assistance animals: the rule then states what the law
/// asks (no charge for an assistance animal) instead of charging it.
const ANIMAL_FEES_WAIVED: &[&str] = &[
    "no deposit",
    "no fee",
    "no pet",
    "no extra",
    "no additional",
    "waived",
    "exempt",
    "not charged",
    "never charged",
    "never charge pet",
    "never charge a pet",
    "don't charge pet",
    "do not charge pet",
    "never charge for assistance",
    "never charge for service",
    "don't charge for assistance",
    "don't charge for service",
    "do not charge for assistance",
    "do not charge for service",
    "free of charge",
];

/// Rules and charges that may "not apply" to someone: a limit waived, not a refusal.
const RULES_THAT_APPLY: &[&str] = &[
    "limits",
    "limit",
    "restrictions",
    "restriction",
    "rules",
    "rule",
    "fees",
    "fee",
    "deposits",
    "deposit",
    "charges",
    "charge",
    "policies",
    "policy",
    "requirements",
    "requirement",
    "terms",
    "discounts",
    "rent",
];

/// What a landlord or seller may lawfully prefer or refuse.
const LAWFUL_SCREENING: &[&str] = &[
    "smok",
    "nonsmok",
    "non-smok",
    "pet",
    "dog",
    "cat ",
    "cats",
    "credit",
    "income of",
    "times the rent",
    "lease",
    "deposit",
    "reference",
    "background check",
    "eviction",
    "financing",
    "cash",
    "offer",
    "closing",
    "qualified",
    "professional",
    "long-term",
    "long term",
    "quiet",
    "responsible",
    "tidy",
    "reliable",
    "respectful",
    "student",
    "nurse",
    "move-in",
    "appointment",
    "escrow",
    "lender",
    "pre-approv",
    "proof of funds",
    "conventional",
    "fha",
    "if you need",
    "if you want",
    "if you're looking for a",
    "if you are looking for a",
    "parking",
    "garage",
    "yard",
    "furniture",
    "lifestyle",
    "welcome",
    "accept",
    "text",
    "email",
    "e-mail",
    "call",
    "phone",
    "contact",
    "showing",
];

/// People described by a practice, one of `$practices` (a regular expression's alternatives):
/// "tenants who skip pork", "if you need an interpreter", unless the sentence offers it.
macro_rules! practised {
    ($practices:literal, $category:expr $(,)?) => {
        Rule {
            lawful_context: Lawful::in_sentence(PRACTICE_PROVIDED_FOR),
            ..audience(
                concat!(
                    r"(who|whose|anyone|someone|people|persons|folks|tenants?|residents?|applicants?|renters?|buyers?|roommates?|housemates?|neighbou?rs|occupants?|everyone|nobody|no one|you)( [a-z'’]+){0,3} ",
                    r"(celebrate|celebrates|celebrated|celebrating|observe|observes|observed|keep|keeps|kept|eat|eats|skip|skips|avoid|avoids|cook|cooks|go|goes|attend|attends|pray|prays|wear|wears|fast|fasts|drive|drives|need|needs|speak|speaks|read|reads|communicate|communicates|use|uses|set|sets|blast|blasts|play|plays|light|lights|practi[cs]e|practi[cs]es|follow|follows|accepted|believe|believes|bring|brings|smell|smells|say|says|sit|sits|host|hosts|send|sends|wire|wires|park|parks|parking|push|pushes|have|has|ask|asks|asking|arrive|arrives|arriving|get around with|gets around with|comfortable with|fasting|praying|cooking|eating|wearing|keeping|observing|attending|going|speaking|reading|using|needing|skipping|avoiding|lighting|playing|hosting|sending|celebrating)",
                    r"( [a-z0-9.'’,-]+){0,6} (",
                    $practices,
                    ")"
                ),
                $category,
            )
        }
    };
}

/// People described by a class, the ways of refusing or preferring people that no class word
/// gives away ("... need not apply", "X preferred", "you'll fit right in"), and the codes for
/// income and neighbourhood make-up.
pub(super) const DESCRIBED: &[Rule] = &[
    described(class_then_people!(race), RaceOrNationalOrigin),
    described(class_then_people!(origin, "(speaking )?"), RaceOrNationalOrigin),
    described(class_then_people!(faith), Religion),
    // "$45 per adult applicant", "each adult occupant signs the lease": screening every adult.
    Rule {
        lawful_context: OLDER_PERSONS_HOUSING,
        unless_before: &["per", "each", "every", "all"],
        unless_within: SELLERS_DESCRIBED,
        ..described(class_then_people!(age), Age)
    },
    described(class_then_people!(sex), Sex),
    described(class_then_people!(ability), Disability),
    // People named by nationality or descent.
    audience(
        r"mexicans|puerto ricans|cubans|dominicans|haitians|jamaicans|africans|nigerians|somalis|ethiopians|arabs|pakistanis|indians|koreans|filipinos|italians|poles|germans|russians|ukrainians|greeks|europeans|canadians|brits|gypsies|gringos|(speak|speaks|speaking) (proper|good|perfect|fluent|native|unaccented|american|real) english|english (as a )?(first|native|primary|only) language|(no|without|w/o) (an? )?(foreign )?accents?|(illegal|legal) (aliens?|immigrants?|status)|aliens|(born|raised) (here|in (the )?(us|u\.s|usa|states|america|this country))|foreign nationals|native (scots|scottish|irish|welsh|english|british|australians|new zealanders|kenyans|singaporeans|malaysians|south africans)|scotsmen|welshmen|irishmen|englishmen|kenyans|australians|new zealanders|singaporeans|malaysians|indonesians|south africans|afrikaners|zulus|kikuyus|tamils|bengalis|gujaratis|marathis|(immigration|visa|residency|citizenship|asylum|naturali[sz]ation|green card|work permit) (paperwork|papers|status|documents|application|case|process)( is| are)? (still )?(pending|in process|being processed|not (yet )?(final|finali[sz]ed|approved|complete))\b[^.;]{0,60}\b(must|pay|pays|will (be|need|have)|need to|needs to|have to|has to|are not|aren't|is not|isn't|cannot|can't|won't|not eligible|ineligible|deposit|upfront|up front|extra|additional|double|rejected|denied|declined|refused)\b",
        RaceOrNationalOrigin,
    ),
    // Neighbours described by their make-up: "the residents here are all pale and blond" (not
    // "the block is mostly older homes").
    Rule {
        unless_next: NAMED_THINGS,
        ..audience(
            concat!(
                r"(neighbou?rs|residents|everyone|everybody|people|folks|families|tenants|owners|homeowners|neighbou?rhood|community|block|street|building|area|town|schools?|district|classrooms|congregation) (here |around here |nearby |on (the|this) (block|street) )?(are|is) (all|mostly|predominantly|largely|primarily|mainly|overwhelmingly|entirely|very|almost all|nearly all|exclusively) (",
                race!(),
                "|",
                origin!(),
                "|",
                faith!(),
                "|",
                age!(),
                r"|pale|blond|blonde|fair)",
            ),
            Steering,
        )
    },
    // The reader described by a class: "you may stand out if you're darker" (not "if you're an
    // English garden lover").
    Rule {
        at_phrase_end: true,
        ..audience(
            concat!(
                r"(if|unless|as long as|so long as) (you're|you are|you were|they're|they are|he's|she's|your family is|you happen to be) (not )?(an? )?(",
                race!(),
                "|",
                origin!(),
                "|",
                faith!(),
                "|",
                age!(),
                "|",
                sex!(),
                "|",
                ability!(),
                r"|darker|lighter|fairer|pale|blond|blonde|white|black|brown|under \d\d|over \d\d)",
            ),
            Steering,
        )
    },
    // Source of income, where state and local law protects it.
    Rule {
        lawful_context: Lawful::in_sentence(&["welcome", "accept"]),
        ..audience(
            r"(on|receiving|collecting|with) (welfare|ssi|ssdi|disability( income| benefits)?|public assistance|government assistance|food stamps|unemployment)|(welfare|ssi|ssdi|subsidi[sz]ed|program|voucher|section[- ]8|public assistance|government assistance) (recipients|participants|holders|tenants|renters|applicants|crowd|types|people|families|element)",
            Steering,
        )
    },
    // Age by decade or generation.
    Rule {
        lawful_context: OLDER_PERSONS_HOUSING,
        ..audience(
            r"in (their|your|his|her) (early |mid |late |mid-|early-|late-)?(teens|twenties|thirties|forties|fifties|sixties|seventies|eighties|nineties|20s|30s|40s|50s|60s|70s|80s|90s)|(you're|you are|they're|they are|if|unless) (under|over|younger than|older than) \d\d|recent (college )?grads?|college grads?|young at heart|pre-?teens|tweens|adolescents|minors|juveniles|zoomers|generation [xyz]",
            Age,
        )
    },
    // Sex and marital status framed by sex.
    audience(
        r"(a )?mr\.?,? (and|&) (a )?mrs|[\x22“]?(mr|mrs|ms|miss)\.?[\x22”]? in front of|(biological|birth) (sex|gender|males?|females?)|the gender (listed|on|assigned|shown)|gender (listed|assigned|on (their|your) (id|birth))|divorc(ee|ees|ée|ées)|divorced (women|men|moms|dads|mothers|fathers|people)|widows?|widowers?|spinsters?|housewife|housewives|unwed (mothers?|moms?|parents?)",
        Sex,
    ),
    // Disability named by condition, and refused accommodations.
    audience(
        r"psych(iatric)? (patients|ward|cases|history)|group homes?|(sane|stable|normal) (people|persons|tenants|folks|residents|applicants|individuals)|insane|lunatics?|crazies|psychos?|retard(s|ed)?|((won't|will not|doesn't|does not|don't|do not|never) (need|require|ask for|request)|(without|not) (needing|requiring|asking for)) (any )?(special |reasonable )?(accommodations?|modifications?)|good (physical|mental) (health|shape|condition)|in good (health|shape)|(can't|cannot|unable to) climb|(must not|cannot|can't|may not) (use|need|require|be in) (an? )?(wheel ?chairs?|walkers?|canes?|crutches|scooters?|oxygen)|(people|persons|tenants|anyone|those|someone) (in|using|with|who use|who need) (an? )?(wheel ?chairs?|walkers?|crutches|scooters?)|wheel chairs?|dementia|alzheimer'?s|hiv[- ](positive|negative|free|status|tests?|testing|screening)|hiv|autism|schizophreni(a|c)|bipolar|ptsd|down syndrome|cerebral palsy|epilep(sy|tic)|(history of |prone to )?(seizures|seizure disorders?|fainting (spells|episodes))",
        Disability,
    ),
    // Service animals counted in a no-pets rule ("welcome, including emotional support animals"
    // is the opposite).
    Rule {
        lawful_context: Lawful::in_sentence(&["welcome", "allowed", "permitted", "accepted", "exempt"]),
        ..audience(
            r"(includes?|including|even|also) (service|assistance|emotional[- ]support|support|therapy|guide|seeing[- ]eye)( (or|and) (service|assistance|emotional[- ]support|support|therapy|guide))? (animals?|dogs?)",
            Disability,
        )
    },
    // Children by nickname.
    audience(r"rugrats|ankle[- ]biters|crumb[- ]?snatchers|munchkins|tots|little rascals|newborns?", FamilialStatus),
    // Neighbourhood make-up in code.
    audience(
        r"urban (element|crowd|types|youth)|inner[- ]city (types|crowd|element|kids|people|folks)|(wrong|other) side of the tracks|(different|wrong|rough|sketchy|undesirable|unsavou?ry|bad|certain|ghetto) (crowd|element|elements|clientele)|undesirables|riff[- ]?raff|thugs|hoodlums|gangbangers|ghetto|\d+ ?(percent|%) (white|black|hispanic|latino|asian|jewish|christian|muslim|catholic|mexican|chinese|indian|korean|immigrant|foreign)|(everyone|everybody|all the neighbou?rs|all the residents)( here| on (the|this) (block|street))? (is|are) (white|black|brown|hispanic|latino|asian|jewish|christian|muslim|catholic|mexican|chinese|indian|korean|american|foreign|immigrants|old|young|retired|married)|before (the|this) (neighbou?rhood|area|block|street|town) changes|(neighbou?rhood|area|block) (is )?(changing|turning)|changing demographics",
        Steering,
    ),
    // Refusals and preferences whatever the class.
    unless_lawful(r"need not apply|needn't apply|should not apply", Steering),
    // "Please don't apply", not a rule that does not apply to someone ("breed and weight limits
    // do not apply to them").
    Rule {
        unless_before: RULES_THAT_APPLY,
        ..unless_lawful(r"(please )?(do not|don't) (bother )?(applying|apply)", Steering)
    },
    unless_lawful(
        r"((will|would|do|does|did|can|shall)( not|n't)|won't|wont|cannot|never|refuses? to) (rent|sell|lease|show|consider|accept)( (it|this|the) (unit|home|house|apartment|property|place|room|space))? to|not rented to",
        Steering,
    ),
    unless_lawful(r"(look|search|go) elsewhere|keep looking|not (a good|the right|an ideal|a great|a) fit", Steering),
    // A person named by a class word alone: "renting to another Korean", "a Muslim".
    Rule {
        at_phrase_end: true,
        ..audience(
            concat!(r"(a|an|another|other|fellow|no|any|more|fewer) (", race!(), "|", origin!(), "|", faith!(), ")"),
            RaceOrNationalOrigin,
        )
    },
    // Religion by dress, observance left out.
    audience(
        r"hijabs?|headscarf|headscarves|turbans?|yarmulkes?|kippahs?|burqas?|niqabs?|(don't|do not|doesn't|does not|won't|will not|who don't) celebrate|prayer (mats?|rugs?)",
        Religion,
    ),
    // Ages as numbers in a rule (a lease signer's 18 or 21 is not one).
    Rule {
        lawful_context: OLDER_PERSONS_HOUSING,
        unless_next: MEASURES,
        ..audience(
            r"((no|not) (older|younger) than \d\d|(must be|be|aged?|ages?|between the ages of) (between|under|over|at least|at most|no more than)? ?([2-9]\d) (and|to|or) (\d\d|older|younger|over|under)|must be ((under|over|younger than|older than) [2-9]\d|at least (2[2-9]|[3-9]\d)))( years old| years of age)?",
            Age,
        )
    },
    // A limit on children, and what children need.
    audience(
        r"(one|two|1|2|single|no more than (one|two|1|2))[- ]child(ren)?|child limit|limit of (one|two|1|2) (child|children|kids?)|(max|maximum|limit|up to|no more than|only) (of )?(one|1|two|2) (child|children|kids?)|(no|not|never|without)[- ](room for )?(strollers?|prams?|pushchairs?|cribs?|car seats?|high ?chairs?|bassinets?|playpens?)",
        FamilialStatus,
    ),
    // National origin by cooking, music and names ("Curry Road" is a street).
    Rule {
        unless_next: PLACE_NAMES,
        ..audience(
            r"(strong|ethnic|foreign|spicy|pungent) (cooking|food)( smells| odou?rs)?|curry|(ethnic|foreign|mariachi|reggaeton|rap|hip[- ]hop) music|(american|english|anglo|normal)[- ]sounding names?|names? (that are )?(hard|difficult) to pronounce",
            RaceOrNationalOrigin,
        )
    },
    // Disability by equipment.
    audience(
        r"(wheelchairs?|walkers?|scooters?|oxygen tanks?) (may |will |could |would |can )?(scuff|scratch|damage|mark|ruin)|oxygen (tanks?|concentrators?)|hospital beds?|medical (equipment|devices?)|mobility scooters?",
        Disability,
    ),
    // Whom the landlord is comfortable with.
    audience(
        r"(more|most) comfortable (renting|selling|leasing)|comfortable with (people|tenants|folks|families|someone|those|anyone) (like|who|of|from)",
        Steering,
    ),
    audience(
        r"(accommodation|modification)s? requests? (will not|won't|are not|aren't|cannot|can't|will never) (be )?(considered|accepted|granted|honou?red|allowed|approved)",
        Disability,
    ),
    audience(
        r"lily[- ]white|(good|right|wrong|bad|better|nice) side of town|side of the tracks|(people|persons|folks|families|those|someone|anyone|tenants|neighbou?rs) (of|from) (your|their|our|his|her|a similar|the same|similar|different|other|a different) (background|culture|heritage|ethnicity|origin|kind)",
        Steering,
    ),
    Rule {
        unless_next: &[
            "lender",
            "lenders",
            "vendor",
            "vendors",
            "builder",
            "escrow",
            "title",
            "closing",
            "contractor",
            "partner",
            "provider",
            "pricing",
            "terms",
            "date",
            "dates",
            "location",
            "access",
            "parking",
            "seating",
            "rate",
            "rates",
            "method",
            "status",
            "customer",
            "school",
            "schools",
            "floor",
            "plan",
            "layout",
            "side",
            "view",
        ],
        ..unless_lawful(r"(are |is )?(strongly |highly )?(preferred|prefered)", Steering)
    },
    unless_lawful(
        r"(you'll|you will|you'd|you would|you) (fit|blend) (right )?in|stand out( here)? if you|feel (right )?at home (here )?if|(fit|blend)s? (right )?in with (the )?(other|existing|current) (folks|people|tenants|residents|renters|neighbou?rs|owners|families)|(fit|blend)s? (right )?in with everyone else",
        Steering,
    ),
    // Health as a condition of renting, and disclosures of it.
    audience(
        r"(clean|full|sound|perfect|good) (bill of )?(physical|mental)( and (physical|mental))? (health|shape|condition)|psychiatric (medications?|meds|treatment|care|conditions?|illness|disorders?|diagnos[ie]s)|(disclose|list|report|declare) (any |all |your )?(prescription |current |past |recent |prior )?(medications?|prescriptions|diagnos[ie]s|hospitali[sz]ations?|hospital stays|medical (conditions?|history)|health (conditions?|history))|(tenants|applicants|residents|renters|buyers|people|someone|anyone|who are|who is) (fully|completely|totally) independent",
        Disability,
    ),
    // An assistance animal held to proof the law does not ask: a registry, a certificate, a
    // school's training ("Service animals need not be registered" is the law).
    Rule {
        lawful_context: Lawful::in_sentence(&["never ask", "won't ask", "will not ask", "don't ask", "do not ask"]),
        ..audience(
            concat!(
                assistance_animal!(),
                r" (must|need to|needs to|has to|have to|are required to|is required to|should) be ",
                animal_credentials!(),
                r"|proof (that )?(your|the|their) ",
                assistance_animal!(),
                r" (is|are|was|were) ",
                animal_credentials!(),
                "|",
                assistance_animal!(),
                r" (are |is )?(allowed|permitted|accepted|welcome) only (if|when|once) (they are |it is |they're |it's )?(registered|certified)",
            ),
            Disability,
        )
    },
    // Accommodations put off ("Reasonable accommodation requests will be considered after 12
    // months of tenancy"): the law asks that they be considered when asked.
    audience(
        r"(accommodations?|modifications?)( requests?)? (will be |are |is |can be |may be )?(only )?(considered|granted|reviewed|accepted|approved|made) (only )?(after|once you have|once you've)",
        Disability,
    ),
    // A faith's day of rest imposed on tenants ("Tenants are expected to keep Sunday as a day of
    // rest"); the Sabbath itself is a faith word of its own.
    audience(
        r"(keep|observe|honou?r|respect) (sundays?|the lord['’]?s day) (as a day of rest|as the lord['’]?s day|holy)",
        Religion,
    ),
    // Applicants by where their people live ("send applicants from the reservation elsewhere").
    Rule {
        unless_next: &["list", "lists", "desk", "office", "system", "form", "forms", "number", "date", "fee", "line"],
        ..audience(
            r"(applicants?|tenants?|renters?|people|folks|families|those|anyone|buyers?) (from|off) the (reservation|rez|pueblo)",
            RaceOrNationalOrigin,
        )
    },
    // Accommodations and modifications refused, and service animals treated as pets.
    audience(
        r"(won't|will not|wouldn't|would not) be (needing|requiring|asking for|requesting) (any )?(special |reasonable )?(accommodations?|modifications?)|(unable to|not able to|cannot|can't|won't|will not|do not|don't|does not|doesn't|never|not) (allow|permit|approve|accept|install|make|add)(ing)? ([a-z-]+ ){0,3}(grab bars|ramps?|handrails|stair ?lifts|wheelchair lifts|(reasonable |special )?(modifications|accommodations))|(service|assistance|emotional[- ]support|guide|therapy|seeing[- ]eye) (animals?|dogs?) (count|counts|are counted|will count|are treated as pets|are subject to|require (the |a )?(same |standard |usual |regular |full )?(\$?[\d,]+ )?(pet )?(deposit|fee|rent)|pay (the |a )?(same |standard |usual |regular |full )?(\$?[\d,]+ )?pet)",
        Disability,
    ),
    // A service animal allowed on paying for a pet ("Q: Can I bring my service animal? A: Only if
    // you pay the pet deposit ...").
    Rule {
        lawful_context: Lawful::in_sentence(ANIMAL_FEES_WAIVED),
        ..audience(
            r"(service|assistance|emotional[- ]support|guide|therapy|seeing[- ]eye) (animals?|dogs?)\b[^.;]{0,40}\b(only if|only when|if|as long as|provided) (you|they|tenants?|the tenant|owners?|the owner) (pay|pays)( the| a| an)?( same| standard| usual| regular| full| extra| additional| monthly)?( \$?[\d,]+)? pet (deposits?|fees?|rent)",
            Disability,
        )
    },
    // People by a condition of sense or body ("blind corner cabinets" are furniture); alarms
    // installed on request for them are provided for, not refused.
    Rule {
        lawful_context: Lawful::in_sentence(DISABILITY_PROVIDED_FOR),
        ..audience(
            r"(anyone|those|people|someone|persons|individuals|tenants|residents|applicants|buyers|renters) (who are |who is |that are )?(legally )?(blind|deaf|hard of hearing|visually impaired|hearing impaired|vision impaired)",
            Disability,
        )
    },
    // Age in words, and who would feel out of place.
    Rule {
        lawful_context: OLDER_PERSONS_HOUSING,
        ..audience(
            r"(anyone|those|people|someone|tenants|residents|folks|buyers|renters|applicants) (over|under|older than|younger than|past) (twenty|thirty|forty|fifty|sixty|seventy|eighty)|(would|will|might|may|could) feel out of place",
            Age,
        )
    },
    // Pregnancy asked about in a preference ("Seller is expecting offers" is not one).
    Rule {
        at_phrase_end: true,
        ..audience(r"(who|that) (are|is|are not|aren't|is not|isn't) (currently )?expecting", FamilialStatus)
    },
    // Occupancy tied to people, not rooms.
    audience(
        r"regardless of (the )?(bedroom|room) count|regardless of (the )?(number of )?(bedrooms|rooms)",
        FamilialStatus,
    ),
    // A cap on the home's occupants, unless it is counted per bedroom ("Occupancy limited to two
    // persons per bedroom, per local ordinance" is the common code standard).
    Rule {
        lawful_context: Lawful::in_sentence(PER_BEDROOM),
        ..audience(
            r"(occupancy|occupants) (capped|limited|restricted) (at|to) (one|two|1|2)( people| persons| occupants)?|max(imum)? occupancy (is|of) (one|two|1|2) (people|persons|occupants)|([3-9]|three|four|five|six)[- ]?(br|bd|bed|bedroom|bdrm)s?\b[^.;]{0,40}\b(max(imum)?|no more than|limit of) (of )?(one|two|1|2) (people|persons|occupants|adults|tenants|residents)",
            FamilialStatus,
        )
    },
    // Religion by membership, observance and the things of a faith.
    // A faith's things, unless the sentence allows them ("The HOA allows exterior religious
    // displays up to two by three feet, the same limit as any other decoration").
    Rule {
        lawful_context: Lawful::in_sentence(&["allows", "allowed", "permits", "permitted", "welcome", "welcomed"]),
        ..audience(r"(religious|holy) (items|symbols|displays|decorations|icons|articles|objects)", Religion)
    },
    audience(
        r"parishioners?|congregants?|(fellow|other) (believers|worshippers|churchgoers|members of (my|our|the) (church|parish|congregation|faith))|(mention|list|tell us|share|name|state|give|provide|write|indicate|disclose|enter) your (parish|church|congregation|faith|religion|denomination|place of worship)|mezuzahs?|crucifix(es)?|traditional values|(attend|attends|go to|goes to) (church|services|mass|temple|mosque|synagogue) regularly",
        Religion,
    ),
    // Race and origin by names, hair, language and belonging.
    audience(
        r"(applicants|tenants|renters|buyers|people|anyone|those|someone|folks|families) (named|called|with names like|whose names? (is|are|sounds?))|(hard|difficult)[- ]to[- ]pronounce (names?|surnames?)|dreadlocks|cornrows|afros|(no|not|without|bans?|banned|prohibits?|prohibited) ([a-z,\x22“”]+ ){0,3}(locs|twists|braids)\b|[\x22“]?conventional[\x22”]? hair ?styles|(natural|ethnic) (hair|hairstyles)|(who|that) (need|needs|require|requires) (a |an )?(translator|interpreter)|(speaks?|speaking) only english|english[- ]only|speaks? the language|(real|true|proper|genuine|born and bred) (americans?|american (families|tenants|buyers))|(must be|should be|only|preferably) (from|born) (around here|here|locally|this country|the (us|u\.s\.|states|area))|(no|not|without) (international|foreign) (students|applicants|buyers|tenants|renters|nationals)|recent (arrivals|immigrants|refugees)|(no|not) (rap|hip[- ]hop|reggaeton|mariachi)",
        RaceOrNationalOrigin,
    ),
    // The reader or a neighbour described by a class with "who is" ("someone who isn't Mexican").
    Rule {
        at_phrase_end: true,
        ..audience(
            concat!(
                r"(someone|anyone|people|tenants|applicants|buyers|renters|those|a person|a tenant|a buyer) (who|that) (is|isn't|is not|are|aren't|are not) (not )?(an? )?(",
                race_origin_or_faith!(),
                ")",
            ),
            RaceOrNationalOrigin,
        )
    },
    // Demographics, unless the writer declines to speak of them ("I can't comment on the
    // demographics of the neighborhood", as a fair housing policy asks).
    Rule {
        lawful_context: Lawful::in_sentence(&[
            // Declined ("can't comment on the demographics"), not offered.
            "can't comment on the demographics",
            "cannot comment on the demographics",
            "can\u{2019}t comment on the demographics",
            "don't comment on the demographics",
            "do not comment on the demographics",
            "unable to comment on the demographics",
            "can't comment on demographics",
            "cannot comment on demographics",
            "can\u{2019}t comment on demographics",
            "don't comment on demographics",
            "do not comment on demographics",
            "unable to comment on demographics",
            "can't discuss the demographics",
            "cannot discuss the demographics",
            "can\u{2019}t discuss the demographics",
            "don't discuss the demographics",
            "do not discuss the demographics",
            "unable to discuss the demographics",
            "can't discuss demographics",
            "cannot discuss demographics",
            "can\u{2019}t discuss demographics",
            "don't discuss demographics",
            "do not discuss demographics",
            "unable to discuss demographics",
            "can't share demographic",
            "cannot share demographic",
            "can\u{2019}t share demographic",
            "don't share demographic",
            "do not share demographic",
            "unable to share demographic",
            "can't provide demographic",
            "cannot provide demographic",
            "can\u{2019}t provide demographic",
            "don't provide demographic",
            "do not provide demographic",
            "unable to provide demographic",
        ]),
        ..audience(r"demographics?|demographically", Steering)
    },
    // Make-up and sameness: people who look alike, a place that never changes.
    audience(
        r"(share|shares|sharing|have|has|of) (the same|a similar|a common|similar) (background|heritage|ethnicity|culture|roots|ancestry|backgrounds)|looks? (a lot |just |exactly |pretty much )?like (you and me|me and you|us)|looks? (a lot|just|exactly) like you|(people|folks|neighbou?rs|families) (just |exactly |much )?like (us|you and me|ourselves)|(where|with|among|of|by) (people|folks|families|others|neighbou?rs) (just |exactly |much )?like (you|yourself|yourselves)|(area|neighbou?rhood|block|street|town|community) has (stayed|remained) the same|before (the|this) (part of (town|the city)|neighbou?rhood|area|block|street|town|city) changes|starts? looking like (the )?(east|west|north|south) side|certain (kind|type|sort|class) of (tenants?|people|buyers?|renters?|residents?|neighbou?rs|persons?|folks|clientele)|(match|matches|fit|fits|suit|suits|in keeping with|reflect|reflects) the (character|makeup|make-up|profile|culture|tone) of the (community|neighbou?rhood|area|block|street|building)|only show (this|the) (home|house|unit|property|listing) to",
        Steering,
    ),
    // A place that never changes ("the building hasn't changed hands" is a sale).
    Rule {
        unless_next: &["hands", "owners", "ownership", "much", "a", "its", "the"],
        ..audience(
            r"(block|street|neighbou?rhood|area|town|community) (hasn't|has not|has never|never|hasn't really) changed",
            Steering,
        )
    },
    // Clergy vouching for a tenant, and faith as a reference.
    audience(
        r"(pastor|priest|rabbi|imam|minister|clergy|church|parish|religious)('s)? (references?|letters?|recommendations?)|(references?|reference letters?|letters?|recommendations?) from (your|a|the|their|his|her) (pastor|priest|rabbi|imam|minister|clergy(man)?|church|congregation|parish|bishop|deacon)|religious (affiliation|preference|background|beliefs?|denomination)|(church|faith|religious) (membership|affiliation)|members of (the )?([a-z'’.]+ ){0,3}(fellowship|church|temple|synagogue|mosque|parish|congregation|ministries|chapel)",
        Religion,
    ),
    // Make-up kept over time ("has stayed largely Irish and Italian").
    audience(
        concat!(
            r"(stayed|remained|been|kept|stays|remains) (largely|mostly|predominantly|primarily|mainly|overwhelmingly|almost entirely|all) (",
            race_origin_or_faith!(),
            ")",
        ),
        Steering,
    ),
    // Origin by arrival.
    audience(
        r"(newcomers|people|folks|families|immigrants|arrivals) from (overseas|abroad|other countries|another country)|(just|recently|newly) (arrived|came|moved|immigrated) (in|to) (this|the) country|(u\.?s\.?|american) birth certificates?",
        RaceOrNationalOrigin,
    ),
    // Age by retirement and by set.
    Rule {
        lawful_context: OLDER_PERSONS_HOUSING,
        ..audience(
            r"(near|nearing|close to|approaching) retirement|(the )?(younger|older|young|retired|senior) set|(the )?(early[- ]bird|early[- ]bird[- ](dinner|special)|golden[- ]years) (set|crowd)",
            Age,
        )
    },
    // Disability: animals doubted, impairments, accessible spaces refused.
    audience(
        r"(so-called|so called|alleged|supposed|fake) (service|assistance|emotional[- ]support|support|therapy) (animals?|dogs?)|(accessible|handicap(ped)?|ada|disabled) (parking )?(spaces?|spots?|parking)( requests?)? (will not|won't|are not|aren't|cannot|can't|is not|isn't) (be )?(granted|approved|honou?red|considered|accepted|provided)|requests? for (a |an )?(reserved |designated )?(accessible|handicap(ped)?|ada|disabled) (parking )?(spaces?|spots?)",
        Disability,
    ),
    // Fittings offered to residents with a hearing or sight loss ("visual fire alarms can be
    // installed for hearing-impaired residents on request") provide for them.
    Rule {
        lawful_context: Lawful::in_sentence(&[
            "can be installed",
            "are installed",
            "is installed",
            "can be fitted",
            "are fitted",
            "visual fire alarm",
            "visual alarm",
            "strobe",
            "flashing",
            "tactile",
            "braille",
        ]),
        ..audience(r"(hearing|visually|vision|cognitively)[- ]impaired", Disability)
    },
    // Steering by blending in, the element, diversity and unchanged faces.
    audience(
        r"(who|that) (will|would|can|could) (fit|blend) (right )?in|(who|that)['’](ll|d) (fit|blend) (right )?in|(family|families|people|folks|buyers?|tenants?|renters?|neighbou?rs|someone|a couple|couples) (that|who) (looks?|look) like (them|us|the neighbou?rs|everyone else|the rest)|(tenants?|applicants?|buyers?|renters?|residents?|someone|a person|people) with (a |an )?(light|fair|pale|lighter|fairer)(,| and)? ([a-z-]+,? ){0,2}(look|complexion|skin|appearance)|(safe|away|free|protected|shielded|sheltered) from (the|that|those|certain|such) (element|elements|crowd|types)|(away from|escape|escape from|without|free of|free from|less|no) (the |all the )?diversity|all[- ]american (part|parts|neighbou?rhood|town|street|block|community|area|families|family|tenants|buyers)|the faces (here )?(haven't|have not|never|don't|do not) change",
        Steering,
    ),
    // A man named for the work ("a handyman special" is a house).
    Rule {
        unless_next: &["special", "specials"],
        ..audience(r"handy (guy|man|fella|gentleman)|(guy|man|fella) who can", Sex)
    },
    // Origin by resettlement, assimilation, a second language and an accent.
    audience(
        r"refugees?|asylum[- ](seekers?|status)|resettle(d|ment)|old[- ]stock|assimilate|assimilated|english (is|isn't|is not) (your|their|his|her) (first|second|native|primary|mother) (language|tongue)|unaccented|accent[- ]free",
        RaceOrNationalOrigin,
    ),
    // People of two origins named together ("folks of Irish or Italian heritage").
    audience(r"(of|with) [a-z]+ (or|and|&) [a-z]+ (heritage|descent|ancestry|extraction|blood)", RaceOrNationalOrigin),
    // Disability: the deaf's ways of calling refused, recovery, placards, wheelchairs, fixtures
    // refused in the passive, assistance animals held to pet rules.
    audience(
        r"(no|not|without|never|(don't|do not|won't|will not|can't|cannot) (accept|take|answer|use)) (tty|tdd|relay|video relay|vrs)( calls?| services?)?|(addiction|substance abuse|drug|alcohol) (recovery|treatment|rehab|rehabilitation)( programs?| centers?)?|(no exceptions?|not|won't|will not|regardless of|don't|do not)[^.;]{0,30}\b(handicap(ped)?|disabled|disability|accessible|ada) (placards?|tags?|plates?|permits?)|(can't|cannot|can not|unable to|won't|will not|not able to|do not|don't|does not|doesn't) (accommodate|allow|fit|take|handle|permit|accept) (a |any )?(wheelchairs?|walkers?|mobility scooters?|(service|assistance|emotional[- ]support|therapy|guide) (animals?|dogs?)|esas?|disabilit(y|ies)|disabled)|no esa (letters?|requests?|exceptions?)|(esas?|emotional[- ]support animals?) (are|count as|are considered|are treated as) pets|(grab bars|ramps?|handrails|stair ?lifts|wheelchair lifts)( and [a-z ]{1,20})? (may not|will not|won't|cannot|can't|can not|are not|aren't|must not|shall not) be (installed|added|made|allowed|permitted|approved)|(esas?|(service|assistance|emotional[- ]support|support|guide|therapy) (animals?|dogs?)) (are |is |will be |must be |get )?(charged|billed|assessed|subject to|held to|limited to|restricted to|treated like)",
        Disability,
    ),
    // Race and neighbourhood make-up by busing, integration and "the element".
    audience(
        r"bus+ing|(from|of) the inner[- ]city|inner[- ]city (kids|children|families|people|element|types|crowd|students|tenants)|(before|prior to|since|after|until) (integration|desegregation)|segregat(ed|ion)|thugs?|(kept|keep|keeps|keeping) out (the|that|those|certain|undesirable|a certain)|(looking for|want|wants|seeking|seek|prefer|like|enjoy) (more |a lot of |some )?diversity",
        Steering,
    ),
    // What children ride and push kept off, and a complex oriented to adults.
    audience(
        r"adult[- ]oriented|(strollers?|tricycles?|trikes?|big wheels|toys|playpens?)( and (strollers?|tricycles?|trikes?|toys|big wheels|scooters|bikes))? (are |must be |will be |to be )?(kept off|not allowed|prohibited|banned|forbidden)",
        FamilialStatus,
    ),
    // Sex as recorded at birth.
    audience(
        r"(sex|gender) (listed |shown |recorded |stated |marked |printed )?(on|at) (their|your|his|her|the|an?) ?(original )?birth( certificates?)?|(sex|gender) assigned at birth|biological (sex|males?|females?|men|women)",
        Sex,
    ),
    // A faith's practice as a building's custom, and a believer as the one wanted.
    audience(
        r"prayers? (before|after|at|during|to (open|start|begin)) (the |each |every |our |a )?[a-z ]{0,20}(potluck|dinner|meal|meeting|gathering)s?|(building|community|monthly|weekly|tenant|resident) (prayers?|bible study|worship|devotions?)",
        Religion,
    ),
    Rule { unless_next: &["in"], ..audience(r"believer", Religion) },
    // A person wanted young ("someone young enough to keep up with the yard").
    Rule {
        lawful_context: OLDER_PERSONS_HOUSING,
        ..audience(
            r"(someone|anyone|a person|people|tenants?|renters?|buyers?|residents?|applicants?) (who is |who are |that is )?(young|younger|old|older)",
            Age,
        )
    },
    // Ages as a number in a rule after a verb ("we can't have anyone under 12 living here"):
    // the word before is no owner's news here.
    Rule {
        lawful_context: OLDER_PERSONS_HOUSING,
        ..audience(
            r"(anyone|someone|no one|nobody|children|kids|tenants?|occupants?|residents?|persons?|applicants) (under|below|younger than|over|older than) (the age of )?\d\d?\b",
            Age,
        )
    },
    // Age by pace of life ("not for anyone slowing down").
    Rule {
        lawful_context: OLDER_PERSONS_HOUSING,
        ..audience(
            r"(anyone|someone|those|people|folks|buyers|tenants|renters|residents) (who (is|are) )?(slowing down|past (their|his|her) prime|getting on in years|set in (their|his|her) ways)",
            Age,
        )
    },
    // Disability: medical needs given no exception, diagnoses asked for, wheelchairs' users.
    audience(
        r"no exceptions? (for|made for|for any) (any )?(medical|health|physical|mental) (conditions?|issues|needs|reasons|problems|limitations)|(list|disclose|provide|report|share|state|name|declare|describe) (any |all |your |their |his |her )?(mental health|psychiatric|medical|health) (diagnos[ie]s|conditions|history|histories|medications|records|treatment)|(folks|people|those|anyone|tenants|renters|applicants|someone|residents) (in|using|who use|on) (wheelchairs|walkers|crutches|mobility scooters)",
        Disability,
    ),
    // Origin by the language spoken, and people kept among their own.
    audience(
        r"(mandarin|cantonese|chinese|korean|vietnamese|tagalog|hindi|urdu|punjabi|bengali|gujarati|arabic|farsi|persian|russian|polish|portuguese|french|haitian creole|creole|hebrew|yiddish|japanese|italian|german|greek|somali|amharic)[- ]speak(ing|ers?)|desi (famil(y|ies)|tenants?|buyers?|households?|people|folks|couples?|community)|(among|with) (their|his|her|your|our) own (people|kind)|(their|your|his|her) own kind|(of|from) (our|their|your|his|her|my) own (race|kind|people|background|ethnicity|colou?r|country|culture|heritage)|(someone|somebody|anyone|people|folks|tenants?|renters?|a family|families|roommates?|a roommate|housemates?|neighbou?rs) (from|of) (our|my) (homeland|home country|native country|motherland|fatherland|old country)",
        RaceOrNationalOrigin,
    ),
    // Refusing a group named earlier ("folks in wheelchairs ... so we'd rather not rent to them").
    audience(
        r"(would|'d|\u{2019}d) rather not (rent|sell|lease|show)( (it|the (unit|home|house|apartment|place)))? to (them|those|such)",
        Steering,
    ),
    // A faith's schooling as the tenant wanted; other faiths set apart.
    audience(
        r"(seminary|divinity|bible college|rabbinical|yeshiva) (students?|graduates?)|seminarians?|non-(jewish|jews|christians?|catholics?|muslims?|hindus?|sikhs?|mormons?|believers|religious)|(little|nothing|not much) in common with (the |your |their |our )?(neighbou?rs|residents|community|locals|other (tenants|residents|owners|families))",
        Religion,
    ),
    // Accommodation refused, and observance asked for.
    audience(
        r"(must not|mustn't|cannot|can't|should not|shouldn't|may not|won't|will not|do not|don't|does not|doesn't) (need|require|request|ask for|expect)( any)? (reasonable )?accommodations?|no (reasonable )?accommodations?( will be| are| can be| to be)? (made|granted|given|provided|offered|available)|reasonable accommodations? (will not|won't|cannot|can't|are not|aren't|is not|isn't) (be )?(made|granted|given|provided|offered|available|considered)",
        Disability,
    ),
    audience(r"(sabbath|shabbat|shabbos|torah|halachically|religiously)[- ]observant", Religion),
    // A question about diversity answered for the place ("This one isn't").
    audience(
        r"(diverse|diversity|integrated|mixed)[^.?!]{0,60}\?\s*(this one|this (neighbou?rhood|area|building|block|community|street)|it|ours) (isn't|is not|ain't|doesn't|does not)",
        Steering,
    ),
    // Make-up kept by covenant and sameness.
    audience(
        r"(protected|kept|preserved|guarded|shielded|maintained) by (its |the |their )?(restrictive|racial|old|original) (covenants?|deed restrictions)|racial(ly)? restrictive covenants?|homogen(e)?ous",
        Steering,
    ),
    // Clients sent elsewhere by who they are ("steer Latino clients toward the east side").
    audience(
        r"steer(s|ed|ing)? (\S+ ){0,2}(clients|buyers|renters|tenants|applicants|customers|families|people|prospects|folks)",
        Steering,
    ),
    // A class asked about ("Are you white?", "Are you a citizen? If not, ...").
    audience(
        concat!(
            r"(are|were) you (a |an )?(u\.?s\.? |american |legal )?(citizens?|immigrants?|natives?|",
            class_of_a_person!(),
            ")",
        ),
        RaceOrNationalOrigin,
    ),
    // Names and accents as proxies for origin.
    audience(
        r"[a-z]+[- ]sounding (first |last )?(names?|surnames?|accents?)|(foreign|ethnic|exotic) (first |last )?(names|surnames)|(names?|surnames?) (that|which) (sound|sounds|are) (foreign|ethnic|exotic|un-?american)",
        RaceOrNationalOrigin,
    ),
    // Diversity as a problem; buyers of one congregation; appearance asked for.
    audience(
        r"diversity (problems?|issues?|concerns?|troubles?)|(problems?|issues?|trouble) with diversity|too (much )?diverse",
        Steering,
    ),
    audience(
        r"(buyers|tenants|renters|members|people|families|applicants|folks|residents) (from|of|in) (the|our|their|his|her) (parish|congregation|church|synagogue|mosque|temple|ward|fellowship)",
        Religion,
    ),
    // A photo of the applicants themselves, or a selfie or headshot, shows who they are.
    audience(
        r"(photos?|pictures?|photographs?|selfies?|headshots?) of (each|every|the|all|any|your|their) (applicants?|tenants?|renters?|buyers?|occupants?|family|household)|(send|include|attach|provide|submit|email|text) (us )?(a |an |your )?(recent )?(selfie|headshot)",
        Steering,
    ),
    // A photo asked for of an identity document is screening every applicant meets ("attach a
    // photo of each adult's driver's license").
    Rule {
        unless_next: &["id", "ids", "identification"],
        lawful_context: Lawful::in_sentence(&[
            "license",
            "licence",
            "passport",
            "photo id",
            "government id",
            "government-issued id",
            "state id",
            "identity document",
            "identification",
            "pay stub",
            "paystub",
        ]),
        ..audience(
            r"(send|include|attach|provide|submit|email|text) (us )?(a |an |your )?(recent )?(photo|picture|photograph)",
            Steering,
        )
    },
    // Ages as a range ("ages 22–30 preferred", "25-35 y/o only") and every occupant an adult.
    Rule {
        lawful_context: OLDER_PERSONS_HOUSING,
        ..audience(
            r"(ages?|aged) \d\d ?(-|–|—|to) ?\d\d|\d\d ?(-|–|—) ?\d\d ?(y/?o|yrs? old|year[- ]olds)|(both|all|every|each) (of them |occupants? |residents? |tenants? |people |persons |household members? )?must be (over|older than|above) \d\d|(all|every|each) (occupants?|residents?|household members?|people living (here|there|in the (unit|home|house|apartment))) must be \d\d|(occupants|residents) must (all )?be (over|older than|above) \d\d",
            Age,
        )
    },
    audience(r"(youthful|young|younger|mature|older|grown-up) (vibe|energy|feel|atmosphere|spirit)s?", Age),
    // Health and independence demanded, a first language held against an applicant.
    audience(
        r"(healthy|well|fit|able|strong|mobile|independent) enough to|(live|living|lives) (fully )?independently|(someone|anyone|tenants?|applicants?|people|renters?|buyers?|residents?|occupants?|must be|are to be|should be) (without|with no|free of|free from) (any )?(medical|health|physical|mental|mobility|psychiatric) (conditions?|issues|problems|needs|limitations|history|impairments?|disabilit(y|ies))|(sound|healthy) (of|in) (mind|body)|(not|never|don't|do not|doesn't|does not|won't|will not|cannot|can't) (require|need) (any )?(help|assistance|care|support) with (daily|everyday) (activities|living)",
        Disability,
    ),
    audience(
        r"(applicants?|tenants?|renters?|buyers?|anyone|those|people|residents?) whose (first|native|primary|home|mother) (language|tongue)|(first|native|primary|home|mother) (language|tongue) (isn't|is not|isn’t|other than)",
        RaceOrNationalOrigin,
    ),
    // A class asked about an applicant ("Is the applicant Black or white?"); a preference by
    // comparison ("would rather rent to someone from around here than to ...").
    audience(
        concat!(
            r"(is|are) (the |this |that |your |each |these |those )?(applicants?|tenants?|buyers?|renters?|famil(y|ies)|couples?|persons?|people|roommates?|he|she|they) (a |an )?(",
            class_of_a_person!(),
            ")",
        ),
        RaceOrNationalOrigin,
    ),
    unless_lawful(
        r"rather (rent|sell|lease|show)( it| the (unit|home|house|apartment|place))? to [^.;]{1,60} than",
        Steering,
    ),
    audience(r"(a|an|any|recent|new|the) immigrants?", RaceOrNationalOrigin),
    // Every adult, modifications refused, conditions asked about, sex by dress.
    Rule {
        lawful_context: OLDER_PERSONS_HOUSING,
        ..audience(
            r"(adult|adults-only|adult-only|child-free|kid-free|grown-up|youthful|young) (atmosphere|environment|lifestyle|vibe|feel|energy)|(prefer|preferred|preference for|want|wants|seeking|looking for) [a-z]+ (under|over|younger than|older than) \d\d",
            Age,
        )
    },
    audience(
        r"(tenants?|residents?|renters?|owners?) (won't|will not|may not|cannot|can't|are not|aren't) (be )?(permitted|allowed) to (install|add|make|put in) (them|any|ramps?|grab bars|handrails|modifications?)|(been|stayed|treated) (in|at|through) (rehab|detox|(a )?(psychiatric|mental) (hospital|ward|facility|institution))|(psychiatric|mental) (hospitals?|wards?|institutions?|hospitali[sz]ations?)",
        Disability,
    ),
    Rule {
        lawful_context: Lawful::in_sentence(ANIMAL_FEES_WAIVED),
        ..audience(
            r"(deposits?|fees?|charges?|pet rent|surcharges?) (required |charged )?(applies|apply|is charged|are charged|will be charged|is due|for) (to |on )?(all )?((tenants?|renters?|residents?|applicants?|anyone|those|people) with )?(service|assistance|support|emotional[- ]support|guide|seeing[- ]eye|therapy) (animals?|dogs?)",
            Disability,
        )
    },
    // "Emotional support animals are just pets with paperwork": an assistance animal treated as
    // a pet, which its pet charges and rules then follow ("are not considered pets" is the law).
    audience(
        r"(esas?|(service|assistance|support|emotional[- ]support|guide|seeing[- ]eye|therapy) (animals?|dogs?|cats?)) (are|is) (just|only|really|basically|simply|nothing but|nothing more than|no different from|treated as|treated like|considered|counted as|classed as) (regular |ordinary |normal )?pets|pets with (paperwork|papers|a note|a doctor's note)",
        Disability,
    ),
    // "If you've got a service dog there's an extra two-fifty deposit for that": a charge on an
    // assistance animal, unless it is waived or is other pets' ("service animals welcome, for
    // other pets there's an extra deposit"). A "no pets" elsewhere does not waive it. The animal
    // may be asked about on its own ("Comfort animal? That's an extra $75 a month").
    Rule {
        lawful_context: Lawful::in_sentence(&[
            "waived",
            "exempt",
            "not charged",
            "never charged",
            "free of charge",
            "refunded",
            "other pets",
            "for pets",
            "regular pets",
            "ordinary pets",
        ]),
        ..audience(
            r"(service|assistance|support|emotional[- ]support|comfort|guide|seeing[- ]eye|therapy) (animals?|dogs?)\b\??[^.;!?]{0,40}\b(there's|there is|there will be|there'll be|you'll pay|you will pay|we charge|we'll charge|we will charge|we add|that's|that is|it's|it is) (also )?(an? )?([\w$,.-]+ )?(extra|additional|separate|higher|added) ([\w$,.-]+ ){0,5}(deposits?|fees?|rent|charges?|surcharges?)",
            Disability,
        )
    },
    // "Service animals are allowed only with a $500 pet deposit": a pet's charge on an assistance
    // animal, unless it is waived.
    Rule {
        lawful_context: Lawful::in_sentence(&["waived", "exempt", "not charged", "refunded in full"]),
        ..audience(
            r"(service|assistance|support|emotional[- ]support|guide|seeing[- ]eye|therapy) (animals?|dogs?) (are |is )?(only )?(allowed|permitted|accepted|welcome) (only )?(with|on payment of|after paying|subject to) (an? |the )?((monthly|additional|extra|standard|regular|usual|refundable|non-refundable) )*(\$[\d,.]+ )?((monthly|additional|extra|standard|regular|usual|refundable|non-refundable) )*(pet )?(deposits?|fees?|rent|surcharges?)",
            Disability,
        )
    },
    // "Don't ask for a reserved spot near the door because of a disability": an accommodation
    // refused before it is asked for.
    audience(
        r"(don't|do not|never|no need to|no point in|no use) (ask|asking|request|requesting)\b[^.;!?]{0,60}\b(because of|due to|on account of|for) (a |an |your |any )?(disabilit(y|ies)|handicap|medical (conditions?|reasons?|needs?)|mobility (issues?|needs?))",
        Disability,
    ),
    // "We'll allow a guide dog only if the tenant prepays $300 for carpet cleaning", "Q: Can my
    // son's therapy dog live with us? A: Only if you pay the pet rent": an assistance animal let
    // in on a payment.
    Rule {
        lawful_context: Lawful::in_sentence(&["waived", "exempt", "not charged", "refunded in full"]),
        ..audience(
            r"(service|assistance|support|emotional[- ]support|comfort|guide|seeing[- ]eye|therapy) (animals?|dogs?)\b[^.;!]{0,80}\bonly (if|when|after|once|with)\b[^.;!?]{0,40}\b(pay|pays|paying|paid|prepay|prepays|prepaid|deposits?|fees?|rent)",
            Disability,
        )
    },
    audience(r"cross-?dress(ers?|ing)|drag (queens?|kings?|performers?)|transvestites?|effeminate", Sex),
    // Origin by birthplace and by country; people by what they are not.
    Rule {
        lawful_context: Lawful::in_sentence(&["welcome"]),
        ..audience(
            r"born (outside|abroad|overseas|elsewhere|out of|in another)|(tenants?|renters?|buyers?|applicants?|people|families|folks|residents?|anyone|immigrants|students) (from|out of) (india|china|mexico|africa|asia|korea|japan|vietnam|the philippines|pakistan|nigeria|somalia|haiti|jamaica|cuba|puerto rico|the middle east|russia|poland|ukraine|iran|iraq|syria|afghanistan|guatemala|honduras|el salvador|colombia|venezuela|brazil|other countries|another country|south america|central america|latin america|the caribbean|eastern europe|western europe|northern europe|southern europe|europe|scandinavia|the uk|england|ireland|germany|france|italy|greece|your country|your homeland|their country|their homeland|your part of the world)",
            RaceOrNationalOrigin,
        )
    },
    audience(
        concat!(
            r"(anybody|anyone|someone|people|those|tenants?|renters?|nobody|no one|applicants?) (who|that) (is|are|isn't|is not|isn’t|aren't|aren’t|are not) (an? )?(",
            class_of_a_person!(),
            ")",
        ),
        RaceOrNationalOrigin,
    ),
    // Neighbourhood make-up by code: "those people", an unchanged block, ESL schools.
    audience(
        concat!(
            r"(avoid|away from|keep out|steer clear of) (\S)?(those|these|certain|such) (people|folks|types|kinds|elements?)|(hasn't|has not|hasn’t|never) changed (the way|like) (the rest|other)|(esl|ell|english[- ]learner|immigrant|minority|free[- ]lunch) (population|students|kids|families|enrollment|neighbors|tenants|applicants|renters|people|speakers)|(traditionally|historically|proudly|solidly) (",
            race_origin_or_faith!(),
            r") (street|block|neighbou?rhood|area|community|building|town|suburb|enclave|part of town|side of town)",
        ),
        Steering,
    ),
    // Personals shorthand for race and sex ("WM seeks WM roommate", "SWF only"), in capitals.
    audience(
        r"(?-i:[SDGM]?[WBHJ][MF])s? (seeks?|seeking|wanted|only|pref(erred|ers)?|roommates?|rm|housemates?)|(seeks?|seeking|looking for|wants?|prefers?|pref) (an? )?(?-i:[SDGM]?[WBHJ][MF])|(ideal|perfect|great|best|suits?|for|4) (an? )?(?-i:[SDGM][WBHJ][MF])",
        RaceOrNationalOrigin,
    ),
    // The fourteenth corpus: a voice or a name that "sounds" a class, an accent held against a
    // caller, looking like the block, interpreters refused, fixtures and mobility aids kept out,
    // prayer banned, a traditional household, foreign passports, "urban" tenants in quotes,
    // victims of abuse refused, and buyers sent where there is "more diversity".
    audience(
        concat!(
            r"(sound|sounds|sounded|sounding) (like (an? )?)?(",
            class_of_a_person!(),
            r")|(",
            origin!(),
            r"|foreign|heavy|thick|strong|ethnic) accents?",
        ),
        RaceOrNationalOrigin,
    ),
    audience(
        r"look(s)? like (the rest of|everyone else (on|in)|everybody else (on|in)|the other) (the |this )?(block|street|neighbou?rhood|building|residents|neighbou?rs|tenants|owners|families)|looks? like (they|he|she|you|they'd|he'd|she'd|you'd) (belong|fit|would fit|would belong)( in)?( here| on (the|this) (block|street)| in (the|this|our) (neighbou?rhood|building|area|community))|(no|without an?|not allow(ed)? an?|no outside) (interpreters?|translators?)( present| allowed| permitted)?",
        RaceOrNationalOrigin,
    ),
    // A foreign passport held against an applicant ("any photo ID, including foreign passports"
    // accepts it).
    Rule {
        lawful_context: Lawful::in_sentence(&["accept", "including", "welcome"]),
        ..audience(
            r"foreign passports?|(holding|with|who hold|on) (a |an )?(foreign|non-us|non-u\.s\.) (passports?|ids?|licen[cs]es?)",
            RaceOrNationalOrigin,
        )
    },
    audience(
        r"(grab bars|ramps?|handrails|stair ?lifts|wheelchair lifts)( and [a-z ]{1,20})? ((are|is) not|aren't|isn't|aren’t|isn’t) (allowed|permitted|approved)|(motori[sz]ed scooters?|mobility scooters?|wheel ?chairs?|walkers)( (are|is))? (banned|barred|not allowed|prohibited|forbidden)|(motori[sz]ed scooters?|mobility scooters?|wheel ?chairs?|walkers) (must|will|are to) be (left|kept|parked|stored)",
        Disability,
    ),
    audience(
        r"(no|ban|bans|banned|prohibit|prohibits|prohibited)[^.;]{0,30}\b(prayer|worship|religious|bible) (gatherings?|meetings?|services?|groups?|circles?|study)|(prayer|worship|religious|bible) (gatherings?|meetings?|services?|groups?|circles?|study) (are |is )?(not (allowed|permitted)|banned|prohibited|forbidden)|no (chanting|praying|prayers?)",
        Religion,
    ),
    audience(
        r"alternative lifestyles?|husband[- ](and|&)[- ]wife (households?|couples?|famil(y|ies)|only)|traditional (households?|couples?|marriages?)",
        Sex,
    ),
    Rule {
        lawful_context: Lawful::in_sentence(&["welcome", "regardless"]),
        ..audience(
            r"(applicants?|tenants?|renters?|anyone|those|people|residents?|buyers?) (with|who have|who has|holding) (a |an |any )?(protective|restraining) orders?|(domestic (violence|abuse)|abuse) (victims|survivors)",
            Sex,
        )
    },
    audience(
        r"(no|not|without|none of the|none of that) .?urban.? (tenants?|renters?|people|types|folks|applicants?|buyers?|crowd|element)|(somewhere|someplace|an area|a neighbou?rhood|areas|neighbou?rhoods|a part of town|places?) with (more|less) (diversity|people like you)|(isn't|is not|isn’t) the (area|neighbou?rhood|block|part of town) for you",
        Steering,
    ),
    // The fifteenth corpus: a first language or a country of birth asked about, papers, a wink
    // at what is meant, pronouns refused, a parish kept to itself.
    audience(
        r"(whose|with a|their|his|her|your) (first|native|primary|mother) (language|tongue)|(country|place) of (birth|origin)|(if you )?catch my drift|if you know what i mean|(wink,? ?){2}|nudge,? nudge",
        RaceOrNationalOrigin,
    ),
    // A birthplace asked of people; "the birthplace of Dr. King" or "of the blues" is history.
    Rule {
        unless_next: &["of"],
        ..audience(
            r"birthplaces?( of (each |every |all |any |the |your |their |his |her )?(applicants?|tenants?|renters?|occupants?|buyers?|residents?|parents?|household members?|you))?",
            RaceOrNationalOrigin,
        )
    },
    audience(
        r"(doesn't|does not|don't|do not|won't|will not|no) (do |use |respect |honou?r |deal with |go by )?(the whole |the |any |preferred )?pronouns?( thing)?|conventional (tenants?|renters?|couples?|famil(y|ies)|households?|people|folks|lifestyles?)",
        Sex,
    ),
    audience(
        r"(sold|rented|leased|offered|shown|listed) (outside|beyond) (the|our|their|this) (parish|congregation|faith|church|synagogue|temple|mosque|fellowship)",
        Religion,
    ),
    // Mental health by diagnosis, a physical test at showings, assistance animals refused or
    // charged as pets, mobility aids and children's things refused.
    audience(
        r"(history|diagnos[ie]s|record|records|treatment) (of|for) (depression|anxiety|bipolar|schizophrenia|ptsd|mental illness|psychiatric|addiction|substance abuse)|(depression|anxiety|panic|eating|personality) (disorders?|history|diagnos[ie]s)|(stairs?|physical|fitness|mobility|agility|walking|strength) (tests?|checks?|exams?|evaluations?|assessments?)|not (have|bring|keep|own) (a |an |any )?(service|assistance|emotional[- ]support|support|therapy|guide|seeing[- ]eye) (animals?|dogs?)|(esas?|(service|assistance|emotional[- ]support|support|guide|therapy) (animals?|dogs?)) (are |is )?not (recognized|recognised|honou?red|exempt|acknowledged)|no (walkers|canes|crutches|wheelies|mobility aids|mobility scooters)",
        Disability,
    ),
    audience(
        r"(tricycles?|trikes?|cribs?|playpens?|strollers?|bassinets?|high ?chairs?|car seats?|baby gates?|changing tables?)(,? (and |or )?(tricycles?|trikes?|cribs?|playpens?|strollers?|bassinets?|high ?chairs?|car seats?|baby gates?|changing tables?))* (are |is )?(not (permitted|allowed|welcome)|prohibited|banned|forbidden)",
        FamilialStatus,
    ),
    // The sixteenth corpus: classes asked about, one race kept, native speakers, slurs and
    // codes for origin and colour, people "of good stock", a class named before "only", refusals
    // in the present tense, sex to match appearance.
    audience(
        r"ask(s|ed|ing)? (each |every |all |the |any )?(applicants?|tenants?|renters?|buyers?|callers?|prospects?|occupants?) (for|about) (their|his|her|your) (pronouns|gender|sex|sexual orientation|religion|faith|race|ethnicity|nationality|national origin|citizenship|immigration status|country of (birth|origin)|native language|disabilit(y|ies)|medical conditions|diagnos[ie]s|age|marital status|pregnancy|plans for children|family plans)|(legal|biological) (sex|gender)|(sex|gender) (must |should |has to |needs to )?match(es)? (their|his|her|the|an applicant's|your) (appearance|looks|id|birth certificates?|original birth certificates?|birth sex|documents|passport|driver'?s licen[cs]e)|friends? of dorothy",
        Sex,
    ),
    audience(
        r"(all|entirely|only|exclusively) (of )?(one|the same|a single) (race|colou?r|ethnicity|religion|faith|nationality|background)|native speakers? (of [a-z]+)?|(?-i:FOB)s? (tenants?|renters?|people|families|applicants?|folks|types|buyers?)|fresh off the (boat|plane)|(of|from) (good |fine |pure |old |solid |sturdy )?(european|anglo|anglo-saxon|nordic|northern european|western european|white|american|english|german|irish|scandinavian|pioneer|colonial|yankee) stock|of (good|fine|pure|solid|sturdy) stock|(pale|fair|white|dark|light|brown|darker|lighter) like (me|us|him|her|them|mine|ours)|paper[- ]bag test|high[- ]yellow|redbones?|(nobody|no one|anyone|no-one|nothing) (darker|lighter|browner|paler|blacker|whiter) than",
        RaceOrNationalOrigin,
    ),
    audience(concat!(origin!(), r"s?[- ]only"), RaceOrNationalOrigin),
    unless_lawful(
        r"not (renting|selling|leasing|showing)( (it|this|the) (unit|home|house|apartment|property|place|room|space))? to",
        Steering,
    ),
    audience(
        r"psych(iatric)? meds|(on|taking|takes?) (any )?(psych|psychiatric|mental health|antipsychotic|antidepressant|anti-anxiety)s? (meds|medications?|drugs)|antidepressants|antipsychotics",
        Disability,
    ),
    audience(r"gents?", Sex),
    audience(r"dinks?[- ](friendly|only|preferred|wanted|welcome)", FamilialStatus),
    // The seventeenth corpus: people of a background (not of every background), shades and
    // voices, names, a covenant's spirit, winks, age for everyone living there, a baby as an
    // extra, playgrounds removed on purpose, pride flags, and disabilities refused by what they
    // need (a dog for nerves, a letter, an exception, a ramp) or by a symptom.
    Rule {
        lawful_context: Lawful::in_sentence(&["of every", "of all", "of any", "regardless", "welcome"]),
        ..audience(
            concat!(
                r"(applicants?|tenants?|people|persons|families|buyers|renters|residents|folks|anyone|those|someone) of [a-z]+ (origin|origins|background|backgrounds|roots)|",
                people!(),
                " from (a |an )?(",
                race!(),
                "|",
                origin!(),
                ") (background|backgrounds|origin|origins|roots|descent)"
            ),
            RaceOrNationalOrigin,
        )
    },
    audience(
        r"(no|any|a) shade (darker|lighter|browner|paler|blacker|whiter)|(darker|lighter|browner|paler) than (the|our|my) (folks|people|neighbou?rs|residents|families|owners|rest)|(is|are) (the )?(applicants?|tenants?|buyers?|renters?|callers?|prospects?|family|couple|person|guy|girl|man|woman|lady) (light|dark|fair|pale|brown)(-skinned)? or (light|dark|fair|pale|brown)|(talks?|talking|speaks?|speaking) (right|white|proper|american)|sounds? (white|american|like us|like one of us)|names? (is |are |that's |that are |that is )?(hard|difficult|tough|impossible|too hard) to (pronounce|say|spell)|(unpronounceable|foreign[- ]sounding|ethnic[- ]sounding) names?|(covenants?|deed restrictions?)\b.{0,120}\b(honou?r|respect|keep|uphold|follow|observe) (its|the|their|that|the covenant's) (spirit|intent|intention)|if (u|you) get me|if (u|you) know what i('| a)?m saying|not (a lot of|much|any|too much) diversity|(only|just|exclusively) (rents?|renting|sells?|selling|leases?|leasing|shows?|showing) (it )?to (us |u\.s\. |american |legal )?(citizens|nationals)|\bif (ur|you'?re|you are|u r) legal\b",
        RaceOrNationalOrigin,
    ),
    audience(
        r"(every|each|all|any) (person|people|persons|occupants?|residents?|individuals?|tenants?)( living| residing| staying| who lives?)?( in| at)?( the| this)?( unit| home| house| apartment| property| place)? must be (at least |over |older than )?(18|19|20|21|an adult|adults|grown)( years old| years of age)?|full[- ]grown (person|people|persons|adults?|tenants?|residents?|individuals?)|(grown[- ]ups?|adults?|persons?|tenants?) (plus|and|with) (a |an |one )?(bassinets?|bab(y|ies)|infants?|newborns?|cribs?|strollers?)|(playground|swing ?sets?|play ?area|tot lot|sandbox)s? (was |were )?(removed|taken out|torn out|torn down|gotten rid of) (for a reason|on purpose|deliberately|intentionally)|take the hint",
        FamilialStatus,
    ),
    audience(
        r"(pride|rainbow|lgbtq?\+?|gay|trans|progress) flags? (may not|can't|cannot|can not|are not|aren't|is not|isn't|won't be|will not be) (be )?(displayed|allowed|permitted|flown|hung|shown|welcome)|(no|ban on|banned) (pride|rainbow) flags",
        Sex,
    ),
    Rule {
        lawful_context: Lawful::in_sentence(DISABILITY_PROVIDED_FOR),
        ..audience(
            r"(dogs?|animals?|cats?|pets?) for (your|his|her|their|my|the) (nerves|anxiety|depression|ptsd|mental health|emotional support|panic attacks)",
            Disability,
        )
    },
    audience(
        r"(esa|emotional[- ]support( animal)?|service[- ]animal|assistance[- ]animal|therapy[- ]animal|doctor'?s?|medical) (letters?|notes?|documentation|certificates?|paperwork|requests?)s? (are |is )?(not (accepted|honou?red|recognized|recognised|valid|considered)|rejected|refused|ignored)|(no|not|never|don't|do not|won't|will not) (accept|honou?r|take|recogni[sz]e) (any )?(esa|emotional[- ]support|service[- ]animal|assistance[- ]animal|doctor'?s?) (letters?|notes?|documentation|paperwork)|no (exceptions?|accommodations?|special treatment|modifications?) (for|based on|because of) (medical|health|disability|disabilities|doctor'?s?)( requests?| reasons?| notes?| needs?| conditions?)?|(hears?|heard|hearing) voices|(won't|will not|wouldn't|would not|refuses? to|doesn't|does not) (hear|consider|allow|permit|approve|entertain|discuss|talk about) (a word about |of |any )?(ramps?|chair ?lifts?|stair ?lifts?|grab bars?|wheelchair ramps?|accessibility (changes|modifications|features))",
        Disability,
    ),
    // The eighteenth corpus: origins by region or descent, papers checked, a birth certificate
    // asked for, English demanded, neighbourhoods kept or "turned into" a people, covenants
    // honoured; faith as belief; a building for the young, careers against retirement, an age
    // "where they'll need help"; assistance animals refused under a pet rule, mobility aids
    // banned, a stair test.
    Rule {
        lawful_context: Lawful::in_sentence(&["of every", "of all", "of any", "regardless", "welcome", "accept"]),
        ..audience(
            r"(from|born in|out of) (the )?(middle eastern|arab|muslim|african|asian|latin american|south american|central american|caribbean|eastern european|foreign|third[- ]world|certain) (countries|nations)|of ([a-z]+ )?[a-z]+ (descent|ancestry|extraction|blood)|non-?(caucasians?|whites?|christians?|europeans?|americans?|citizens|natives?)|(check|checks|checked|verify|verifies|ask for|asks for|need to see|must (show|present|provide)) (your |their |the |all |any )?(immigration|citizenship|naturali[sz]ation|green card) (papers|documents|status|documentation|cards?)|(not|aren't|are not|ain't|isn't|is not) here legally|birth certificates? (from|issued in|issued by) (a |an |the )?(us|u\.s\.|american|united states)( hospital| state| county)?|(provide|show|present|submit|bring) (a |an |your |their )?(us |u\.s\. |american )?birth certificates?",
            RaceOrNationalOrigin,
        )
    },
    audience(
        r"(must|should|need to|needs to|have to|has to|pls|please|you('ll)? need to) be fluent in english|(no|don't|dont|do not|doesn't|doesnt|does not|won't|wont|will not) (do |use |provide |allow |need |work with )?(translators?|interpreters?)|(turned|turning|become|becoming|became|turn) (into )?(a |an )?(little (mexico|havana|saigon|india|italy|africa|tokyo|korea|manila|haiti|mogadishu)|chinatown|barrio|ghetto|mexico|tijuana|the third world)|keep(ing|s)? (it|this|the|our|their) (subdivision|neighbou?rhood|block|street|area|community|building|town|complex) (white|christian|all[- ]white|homogeneous|pure|american)|(covenants?|deed restrictions?) (is |are )?(still )?(honou?red|enforced|observed|followed|respected)",
        RaceOrNationalOrigin,
    ),
    audience(
        r"(don't|dont|do not|doesn't|doesnt|does not) (believe in|worship|pray to|go to) (god|jesus|christ|allah|church|mass|temple|synagogue|mosque)",
        Religion,
    ),
    audience(
        r"(winding down|slowing down|close to|nearing|approaching) (toward |towards |to |into )?retirement|(starting out|early) in (their|your|his|her) careers?|(a|an) (young|youthful)(,| and)? ([a-z]+,? ){0,2}(building|community|complex|vibe|crowd|neighbou?rhood|block|atmosphere)|at (the|an) age (where|when) (they|he|she|you)('ll| will| might| may| would)? (soon )?(need|needs|require)",
        Age,
    ),
    Rule {
        lawful_context: Lawful::in_sentence(DISABILITY_PROVIDED_FOR),
        ..audience(
            r"not even (for )?(guide|service|assistance|seeing[- ]eye|emotional[- ]support|therapy) (dogs?|animals?)|no (esas|emotional support animals|service animals|assistance animals|service dogs|guide dogs)|no (motorized |power |electric )?(scooters|wheelchairs|walkers|mobility aids)( (or|and) (motorized |power |electric )?(scooters|wheelchairs|walkers|mobility aids))* (are |is )?(allowed|permitted)|(walk|climb|go|get|make it) up ([a-z0-9-]+ ){0,3}(flights?|stairs|steps|floors)( of stairs)? (unassisted|without (help|assistance|aid|a cane|a walker))",
            Disability,
        )
    },
    // People described by what they practise: a faith's holidays, food, dress and worship, a
    // language or a way of communicating, what they need to hear or see ("tenants who skip
    // pork", "anyone who wears a bindi", "if you communicate in sign language"). The practice
    // is never property; where the sentence offers it ("an interpreter is available for
    // residents who need one") it is a service.
    practised!(
        "(a |the )?nativity scenes?|candle lighting|(midday |friday |morning )?prayers|sunrise services?|meat[- ]and[- ]dairy|(a|one|the) (whole |full |entire )?month|meat on fridays|(strict )?dietary laws|grace|five times a day|a pew|pews|a nativity|christmas|easter|hanukkah|chanukah|ramadan|eid|diwali|holi|passover|yom kippur|lent|shabbat|sabbath|mass|church|temple|synagogue|mosque|shul|pork|bacon|kosher|halal|meat and dairy|dairy and meat|a bindi|bindis|a tilak|tilaks|a turban|turbans|a hijab|a headscarf|a yarmulke|a kippah|a rosary|a cross|incense|jesus|christ|the bible|the quran|the koran|the torah",
        Religion,
    ),
    practised!(
        "money (back )?home|remittances|lunar new year|chinese new year|fish sauce|kimchi|firecrackers|an accent|accents|english|spanish|mandarin|cantonese|arabic|hindi|a translator|translators",
        RaceOrNationalOrigin,
    ),
    practised!("strollers|a stroller|car seats|tricycles|trikes|cribs|a crib|high ?chairs|diapers|sippy cups", FamilialStatus),
    practised!("sign language|braille|an interpreter|interpreters|hearing aids?|a cane|canes|a white cane|a walker|a wheelchair|mobility scooters|a mobility scooter", Disability),
    // Age by birth year, by memory and by generation ("if you remember to water the roses" is
    // a reminder).
    Rule {
        lawful_context: OLDER_PERSONS_HOUSING,
        unless_next: &["to"],
        ..audience(
            r"(if you|anyone who|someone who|people who|those who|tenants who|applicants who|folks who|who) (can |still )?(remember|remembers|recall|recalls|grew up with|grew up before|grew up on|grew up listening)",
            Age,
        )
    },
    Rule {
        lawful_context: OLDER_PERSONS_HOUSING,
        ..audience(
            r"born (before|after|in|prior to|since|between) (the )?(19|20)\d\d|aarp|under[- ]\d\d (crowd|set|only|tenants|residents|renters|vibe|building)|old enough to (sign|rent|be on|drink|drive|vote)|finished (college|school|university|grad school) (within|in) the (last|past)|(living on|collecting|drawing|cashing|on) (a |their |your )?(pension|social security)( checks| income| benefits)?|(days|years|months) (to|until|till) (their|your|his|her) (pension|retirement)",
            Age,
        )
    },
    // Sex by title, by the letter on an ID and by body.
    audience(
        r"(no|only) (mr|mrs|ms|miss|sra|srta)\b|(mr|mrs|ms|sra|srta)\.? (applicants?|tenants?|renters?|only)|(titled|signed|signs|sign|signing|goes by|go by|addressed as|firme como)( as)? (mr|mrs|ms|miss|sra|srta|sr)\b|(an? )?\b(m|f)\b on (their|your|his|her|the) (driver['’]?s license|license|licence|id|birth certificate|passport)|(marked|listed as) ['‘\x22“]?(m|f|male|female)\b|(sex|gender) markers?|pronouns (listed|shown|recorded|printed|stated) on|(with|use|uses|using) (she/her|he/him|they/them)|(one|a) bride and (one|a) groom|rainbow[- ]flag (crowd|types|people|folks|set)|no beards|(shave|shaves|shaving) (their|your|his|her) (face|legs)",
        Sex,
    ),
    // Children by what they bring, and pregnancy.
    audience(
        r"(little|tiny|small) (feet|footsteps)|pitter[- ]patter|(no|without|not|never|sin) ([a-z0-9.,]+ ){0,4}(sippy cups|crayons|school backpacks|school runs?|bunk beds|toys|diapers|tricycles|trikes|cochecitos|cunas|carriolas|sandboxes|feedings|night feedings|diaper pails)|(gives?|giving|gave) birth|(gets?|becomes?|became|is|are|being|got) pregnant|pregnan(cy|cies)|baby on the way|(no|without|with no|zero|any) dependents|(sippy[- ]cups?|nappy|nappies|diapers?|strollers?|prams?|crayons?|toys?|tricycles?|trikes?|cribs?|car[- ]seats?|high[- ]?chairs?|pacifiers?|play[- ]?dates?)[- ]free|(anyone|anybody|those|households?|families|tenants|renters|residents|people) with (car[- ]seats|strollers|prams|cribs|high ?chairs|playpens)|(done|finished|through) with (the )?(nappies|nappy|diapers?|homework|school runs?|sippy cups|car seats|strollers|prams|cribs|toddlers|teething|potty training)",
        FamilialStatus,
    ),
    // Faith by sacrament and by a Spanish listing's practice.
    audience(
        r"baptism(al)? (certificates?|records?)|accepted (jesus|christ)|(van|va|vaya|vayan|asiste|asisten|asista|asistan) a misa|practicantes?",
        Religion,
    ),
    // People required to be of a race or an origin.
    audience(
        concat!(people!(), " (must|should|need to|has to|have to) be (", race!(), "|", origin!(), ")"),
        RaceOrNationalOrigin,
    ),
    // Race by skin, sameness and a place kept as it was.
    audience(
        r"brown (faces?|skin)|(dark|darker|brown|black|white|pale|light)[- ]skinned|all-pale|(stayed|stays|remained|remains) all[- ](pale|white)|(whites|blacks|caucasians?)[- ]only|(everyone|everybody|people|folks|neighbou?rs|residents|families)( [a-z]+){0,4} (look|looks) (alike|the same)|paper bag test|(hasn't|has not|haven't|have not|never|not) (yet )?['‘\x22“]changed",
        RaceOrNationalOrigin,
    ),
    // Origin by borders, birthplace, papers refused and names.
    audience(
        r"south of the border|(born and raised|born|raised|born and bred)( right)? (here )?in (the )?(us|u\.s|usa|states|america|this country)|(itins?|matr[ií]culas?( consular)?)( [a-z,]+){0,5} (will not|won't|are not|aren't|cannot|can't|not) (be )?(accepted|considered|allowed|valid|taken)|(no|not|don't|do not|won't|will not) (accept |take )?(itins?|matr[ií]culas?)|(applicants?|applications?|tenants?|people|persons|anyone|someone|folks|renters|buyers|candidates|residents)( with| whose)? names? (like|such as)|(anglo|anglo-saxon|european|white|ethnic|foreign)[- ](sur|last |family )?names|(pay ?stubs?|applications?|ids?|licen[cs]es?) (read|reads|say|says|that read|that say) [a-z]+,? ([a-z]+,? )?(or|and) [a-z]+",
        RaceOrNationalOrigin,
    ),
    // Disability by what a tenant can do unaided.
    audience(
        r"(must|should|will need to|need to|needs to|have to|has to) be able to (hear|speak|talk|walk|climb|read|lift|manage (the )?(stairs|steps))|(able to|must|have to|has to|need to|needs to|who can|who could) (hear|see|read|climb)( [a-z'’]+){0,8} (on (your|their|his|her) own|(by )?(yourself|themselves|himself|herself)|without (hearing aids|glasses|help|assistance|aids|an aid|a cane|a walker|special equipment|a hearing aid))|steady on (their|your|his|her) feet|(no|without) (strobe|flashing[- ]light|visual|vibrating) (alerts?|alarms?|doorbells?)|no braille",
        Disability,
    ),
    // Covenants kept, harmony with a heritage, names easy to say, papers of other countries.
    audience(
        r"(honou?rs?|honou?ring|enforces?|enforcing|keeps?|upholds?|respects?|follows?) (its |the |our |their )?(original |old |historic )?(racial )?(covenants?|deed restrictions?)|(harmony|in keeping|in step|fit|fits|match|matches) with (the )?(community|neighbou?rhood|area|street|block|building)('s|’s) (heritage|character|culture|make-?up|profile|values|traditions)|names? (should|must|needs to|has to) be easy (for [a-z ]+ )?to (pronounce|say|spell)|easy[- ]to[- ]pronounce names?|names? you have to practi[cs]e",
        RaceOrNationalOrigin,
    ),
    Rule {
        lawful_context: Lawful::in_sentence(&["accept", "welcome"]),
        ..audience(r"(passports?|ids?|licen[cs]es?|documents|papers) from other countries|consular (ids?|cards?)|foreign (passports?|ids?|licen[cs]es?)", RaceOrNationalOrigin)
    },
    // A faith's objects refused, and its study required.
    audience(
        r"(no|not|without|never) ([a-z,]+ ){0,4}(menorahs?|crucifix(es)?|shrines?|idols?|prayer flags|rosar(y|ies)|nativity scenes?|mezuzahs?)|scripture (study|studies|reading)",
        Religion,
    ),
    // A sense or a body part a home is said to need ("works best for folks with sharp ears").
    audience(
        r"(folks|people|someone|anyone|those|tenants?|renters?|buyers?|residents?|applicants?) with (sharp|good|perfect|keen|strong|young|healthy|excellent) (ears|hearing|eyes|eyesight|vision|knees|legs|lungs|backs?|joints|hips)|(sharp|good|perfect|keen|strong|healthy|excellent|20/20) (ears|hearing|eyes|eyesight|vision|knees|legs|lungs|backs?|joints|hips) (is |are )?(a must|required|a requirement|needed|necessary|essential)",
        Disability,
    ),
    // Children told by their routines and pastimes, refused: feedings at night, nap times, play
    // dates and sleepovers banned, weekends without youth sport.
    audience(
        r"(midnight|night ?time|nighttime|late[- ]night|overnight|middle[- ]of[- ]the[- ]night) feedings|nap[- ]?time schedules?|saturday[- ]morning cartoons|(play ?dates|sleepovers)\b[^.;]{0,60}\b(banned|not allowed|prohibited|not permitted|forbidden)|(no|bans? on|banned) (play ?dates|sleepovers)|(rather than|instead of|not|no|without|never)( [a-z'’]+){0,4} (travel (soccer|baseball|hockey|ball|team)s?|little league|soccer (practices?|tournaments?|games?))",
        FamilialStatus,
    ),
    // Teenagers told by learning to drive ("anyone with a learner's-permit driver in the house").
    audience(
        r"(anyone|anybody|households?|families|those|folks|people|tenants|applicants|renters|buyers) with (a |an |any )?(teen(age)?|learner'?s?([- ]permit)?|student) drivers?|learner'?s?[- ]permit (drivers?|holders?|teens?|kids?)",
        FamilialStatus,
    ),
    // A pregnancy asked about ("can I ask when you're due?").
    audience(r"when (are you|you're|you’re|you are|is the baby|is your baby) due\b|(your|the baby's|the baby’s) due date", FamilialStatus),
    // Membership of a congregation rewarded ("$50 off for tenants who register in the parish").
    audience(
        r"(register|registered|registering|enrolled|enroll|enrol) (in|with|at) (the|a|our|your) (parish|congregation)|(discount|off (the|your) rent|rent (reduction|break|credit))[^.;]{0,80}\b(parish|parishioners|congregation|congregants|church members)",
        Religion,
    ),
    // An applicant steered to another building or told they would feel more at home elsewhere
    // ("I'd suggest our Garden Grove property, where you'd feel more at home"), or judged by their
    // accent.
    audience(
        r"(where|there) you'?d (probably |likely )?(feel|be) more (at home|comfortable)|you'?d (probably |likely )?(feel|be) more (at home|comfortable) (at|in|over at|over in|with|there|elsewhere)|more of your (own )?(community|people|kind|culture|crowd)|(would|might|will|may) (be a better fit for you|suit you better|be better suited (to|for) you)",
        Steering,
    ),
    audience(r"(with|because of|given|judging by|considering) (the|your|that|an|his|her|their) accents?", RaceOrNationalOrigin),
    // Age told by a stage of life, working years left, or what older people are said to like
    // ("at your stage of life you'd be happier at the Oaks", "fifteen working years ahead of
    // you", "not early-bird specials and bingo").
    audience(
        r"(at|in) your (stage|time|point|season) (of|in) life\b[^.;]{0,80}\b(happier|better|more comfortable|suit|cater)|(working|productive|earning) years (ahead of|left in|left for) you|early[- ]bird (specials?|dinners?) and bingo|bingo and early[- ]bird",
        Age,
    ),
    // A faith's traditions as what makes a resident ideal ("celebrates Christmas and Easter
    // together, ideal for tenants who share those traditions"), and accommodations refused in
    // general ("we don't set aside parking for anyone's medical needs").
    audience(
        r"(ideal|perfect|great|best|suited|meant) for (tenants|residents|buyers|renters|people|families|those|anyone|neighbou?rs|applicants) who (share|follow|keep|observe|celebrate|practi[cs]e) (those|these|our|the same|such) (traditions|beliefs|faith|holidays|observances)",
        Religion,
    ),
    audience(
        r"(don't|do not|won't|will not|never|can't|cannot) (set aside|reserve|hold|make|give|provide|offer|change)\b[^.;]{0,40}\b(for|to meet) (anyone's|anybody's|any|someone's|people's|your|tenants'|residents') (medical|health|mobility|accessibility|special) (needs|conditions|reasons|requirements)",
        Disability,
    ),
    // Sex by favours asked of a tenant or looks wanted ("deposit waived for a coffee date with
    // the landlord", "private showings for pretty applicants").
    audience(
        r"(dates?|dinner|drinks|coffee)( dates?)? with (the|your|me|our) (landlord|landlady|owner|manager|super)|(the|your) (landlord|landlady|owner|manager) (staying|sleeping|spending the night|stays|sleeps) over|(pretty|attractive|good[- ]looking|hot|cute|sexy|beautiful|gorgeous) (applicants|tenants|renters|girls|ladies|women|roommates|housemates|candidates)",
        Sex,
    ),
    // Assistance animals brought under a rule against animals ("our no-animals policy covers them
    // too", "a strictly no-animals property with no exceptions"), accommodations refused in other
    // words ("the stairs are part of the deal, so don't ask us to move you to the ground floor").
    audience(
        r"(guide|service|assistance|seeing[- ]eye|support) (dogs?|animals?)\b[^.;]{0,80}\b(strictly )?no[- ](animals?|pets?|dogs?) (property|building|policy|rule)\b[^.;]{0,30}\b(covers?|applies|includes?|extends|no exceptions)|no[- ](animals?|pets?|dogs?) (policy|rule) (covers|applies to|includes|extends to)( all)? (guide|service|assistance|seeing[- ]eye|support) (dogs?|animals?)|(don't|do not|never) ask (us )?(to|for)[^.;]{0,40}\b(ground floor|first floor|lower floor|ground-floor unit|accommodations?|ramps?|an elevator)|(don't|do not|won't|will not) (do|make|offer|grant) (special|any) arrangements\b[^.;]{0,60}\b(parking|stairs|ground floor|elevator)",
        Disability,
    ),
    // Immigration status by a euphemism, age by a generation's name, and a neighbourhood kept as
    // it always was.
    audience(r"(papers|documents) in order", RaceOrNationalOrigin),
    audience(r"digital natives", Age),
    audience(
        r"(kept|keep|keeps|keeping|preserve|preserves|preserving) the (neighbou?rhood|street|block|area|community) the way it'?s? (always )?been",
        Steering,
    ),
    // A faith's celebration expected of residents ("the HOA expects each new owner to put up
    // lights and a nativity scene"), and residents expected to manage alone ("tenants who can get
    // around on their own").
    audience(
        r"(expects?|expected|requires?|required|must|asked to|have to|has to)\b[^.;]{0,50}\b(nativity scenes?|menorahs?|crèches?|creches?)",
        Religion,
    ),
    audience(r"(can|could|able to) (get around|manage|cope|live) (on (their|your|his|her) own|by (themselves|yourself|himself|herself))", Disability),
    // Assistance animals counted as pets; conditions refused.
    audience(
        r"(guide|service|seizure|assistance|seeing[- ]eye|emotional[- ]support|therapy) (dogs?|animals?)( and [a-z -]+ (dogs|animals))? (count|counts|are counted|are treated|treated|are considered) as pets|(no one|nobody|anyone|tenants|applicants|people|renters) with (a |an )?(stutter|tics|seizures|episodes|conditions|a condition|medical conditions)",
        Disability,
    ),
    // Pregnancy as "expecting" at a phrase's end ("if you're expecting, look elsewhere"; not
    // "if you're expecting guests").
    Rule {
        at_phrase_end: true,
        ..audience(r"(you're|you are|she's|she is|they're|they are|who's|who is|who are|tenant is) expecting", FamilialStatus)
    },
    // Gender identity by transition and presentation; race by hair.
    audience(
        r"(who is|who's|who are|anyone|someone|no one|nobody|people|tenants?|applicants?) (currently )?transitioning|(match|matches|matching) how (you|they|he|she) presents?|on hormones|(tenants?|applicants?|people|anyone|someone|those|residents?) whose hair|relaxers",
        Sex,
    ),
    // A language other than the owner's wanted gone, unless the sentence offers it.
    Rule {
        lawful_context: Lawful::in_sentence(PRACTICE_PROVIDED_FOR),
        ..audience(r"(asks?|asking|calls?|calling|writes?|speaks?) (for [a-z ]{1,20} )?in (another|a different|a foreign) language|what language you (dream|think|pray|speak at home) in|(last|family|sur)names? (sound|sounds) like", RaceOrNationalOrigin)
    },
    // Age as a lease rule and by schooling long past.
    Rule {
        lawful_context: OLDER_PERSONS_HOUSING,
        ..audience(
            r"(once|when|after|if|until|before) (a |the |any |each )?(tenants?|residents?|occupants?|renters?|applicants?|owners?|buyers?|you|they|he|she) (turns?|reach(es)?|hits?) (the age of )?(\d\d|fifty|sixty|seventy|eighty|ninety)|birth ?(years?|dates?) (before|after|earlier than|later than|prior to|in the|from the|of) (the )?(19|20)\d\d|(finished|graduated( from)?|left|completed) (college|school|university|high school|grad school)( at least| over| more than| less than| no more than| within the last| in the last)? ([a-z]+|\d+) years ago",
            Age,
        )
    },
    // Fitting in, told by voice, hair or looks; a look kept consistent.
    audience(
        r"(they|you|he|she|who|tenants?|people|buyers?|applicants?|callers?|families|folks|renters?) (would not|wouldn't|won't|will not|don't|do not|doesn't|does not|might not|may not|would never|never|could not|couldn't) (really )?(blend|fit) in|(callers?|applicants?|tenants?|people|anyone|someone|those|buyers?|renters?|prospects?) whose (voices?|accents?|hair|hairstyles?|looks|appearance|names?|skin)|(applicants?|tenants?|renters?|buyers?|prospects?)['’]? (social media |facebook |instagram |online )?(photos?|pictures?|selfies?|profile pictures?)|(keep|keeps|keeping) the (building|community|complex|neighbou?rhood|block|street)['’]?s? look",
        RaceOrNationalOrigin,
    ),
    // Disability by an assistance animal refused or counted against a pet rule, a modification
    // refused, medications asked for.
    Rule {
        lawful_context: Lawful::in_sentence(DISABILITY_PROVIDED_FOR),
        ..audience(
            r"(no one|nobody|no household member|no member of the household|no occupant|no resident|no tenant|no applicant)( [a-z]+){0,2} (requires?|needs?|uses?|has|relies on) (a |an )?(service|assistance|guide|emotional[- ]support|support|therapy|seeing[- ]eye) (dogs?|animals?)|(that |which |this )?(includes?|including|extends? to) (all )?(service|assistance|guide|emotional[- ]support|support|therapy|seeing[- ]eye) (dogs|animals)|(not|never|won't|will not) (allow|permit|approve|let) (a |any |the )?(tenants?|residents?|occupants?|owners?|buyers?) (to )?(widen|lower|install|add|build|put in) (the |a |any )?(bathroom |front |entry |bedroom |hallway )?(doorways?|doors|grab bars?|ramps?|handrails?|counters?|stair ?lifts?|chair ?lifts?|roll-in showers?)|(tenants?|residents?|occupants?) (may not|must not|cannot|can't) (request|make|install)( any)? (alterations|modifications)|(list|disclose|declare|report|name)( all| every| any| each)? (of )?(their |your |the )?(prescription )?(medications?|prescriptions?|diagnos[ie]s|medical conditions?|health conditions?)",
            Disability,
        )
    },
    // Sex by a restroom matched to a birth certificate; children by a no-under-fives policy and by
    // the games they play.
    audience(
        r"(restrooms?|bathrooms?|locker rooms?|changing rooms?|facilities) (that |which )?(matches|match|matching|corresponding to|according to) (their|his|her|your|one's) (birth certificates?|birth sex|sex at birth|assigned sex|biological sex)",
        Sex,
    ),
    audience(r"no[- ]under[- ]([a-z]+s|\d+s?)\b|hopscotch|after school lets out", FamilialStatus),
    // An applicant asked their age or their medicines; minors capped by number; voucher holders
    // sent elsewhere; one faith's holiday alone allowed.
    Rule {
        lawful_context: OLDER_PERSONS_HOUSING,
        ..audience(r"how old are you|what is your age|(do|will) you plan to retire", Age)
    },
    Rule {
        lawful_context: Lawful::in_sentence(DISABILITY_PROVIDED_FOR),
        ..audience(
            r"(do|does|will) (you|anyone|any occupant|any household member|anyone in the household|any applicant|any tenant)( currently)? (take|use|need|require) any (prescription |daily |regular )?(medications?|meds|medicines?|prescriptions)",
            Disability,
        )
    },
    Rule {
        lawful_context: Lawful::in_sentence(OCCUPANCY_CODE),
        ..audience(
        r"(max(imum)?( of)?|at most|no more than|limit(ed)? (of|to)|only) (one|two|three|1|2|3|a single) (occupants?|residents?|persons?|people|tenants?|children|kids|minors) (under|below|younger than) (the age of )?(\d+|eighteen|sixteen|twelve|ten|five|six|thirteen|twenty-one)\b",
        FamilialStatus,
    )
    },
    audience(
        r"(section[- ]8|(housing choice )?vouchers?|rental assistance|subsidies)( holders| tenants| recipients| users)? (should|must|need to|may want to|will have to|can) (apply|look|go) elsewhere",
        Steering,
    ),
    audience(r"(decorations?|displays?|ornaments)\b[^.;]{0,40}\b(only|just) (christmas|easter|christian|religious)\b", Religion),
    // A household kept small in a home with rooms for more (whatever follows: "a three-bedroom
    // unit"; "small household appliances" are things).
    Rule {
        unless_next: &["appliances", "appliance", "items", "goods", "repairs", "chores", "pets"],
        ..audience(
            r"small household|(one|two|1|2) (people|persons|occupants|residents|adults) (max|maximum|tops|at most|only)( in| for)? (the |a |this |our )?(three|four|five|3|4|5)[- ]?(bedroom|bed|br|bd)|(no more than|at most|max(imum)?( of)?) (one|two|1|2) (people|persons|occupants|residents|adults|guests) in (the |a |this |our |any |each |every )?((one|two|1|2)[- ]?(bedroom|bed|br|bd)?,? (or|and|to) )?(three|four|five|3|4|5)[- ]?(bedroom|bed|br|bd)",
            FamilialStatus,
        )
    },
    // Worship told by the pew, a quarter named for the people who live there, a photo asked of
    // applicants to see who they are, and their kin.
    audience(
        r"(sunday|saturday|sabbath|friday) (mornings?|evenings?|nights?|afternoons?)( [a-z]+){0,2} (in|at) (the |a )?(pews?|mass|services|synagogue|shul|mosque)|(fill|fills|filling|in) the pews|in a pew( on| every)? (sundays?|saturdays?|the sabbath)|(sunday[- ]morning|church[- ]going|churchgoing|god[- ]fearing|bible[- ]reading|grace[- ]before[- ](dinner|meals?|supper))[,]? ([a-z-]+,? ){0,3}(kind|sort|type) of (place|building|household|house|street|block|community|home|people|folks|tenants?)|(sunday[- ]morning|sabbath) (regulars|faithful)|(church[- ]going|churchgoing|mass[- ]going|pew) (regulars|crowd|faithful|folks|types|set)",
        Religion,
    ),
    audience(
        r"(far|away|safely away|a world away|miles|well away) from (the )?(?-i:barrio|ghetto|hood|projects)\b|(not one of|none of) those [\x22“'‘]?diverse[\x22”'’]? (neighbou?rhoods?|areas?|communit(y|ies)|blocks?|buildings?|places|parts of town)|(element|crowd|types|folks|people)( (you see|you'll see|you find|living|who live|that lives?))? (from )?across the tracks|country[- ]club (crowd|types)|the country[- ]club set",
        Steering,
    ),
    audience(
        r"(send|include|attach|submit|sends|includes|attaches|submits|asks? for|requires?|wants?) (a |an |your |recent |current )*(photo|picture|pic|selfie|headshot)s? (of (yourself|yourselves|everyone)|with (the|your|every|each) (application|inquiry|message|email))",
        RaceOrNationalOrigin,
    ),
    audience(
        r"(someone|anyone|tenants?|buyers?|renters?|applicants?|people|folks|those) who ((won't|will not|won’t) be|isn't|is not|aren't|are not|isn’t|aren’t) (retiring|retired)|(not|nowhere near|far from) retirement age",
        Age,
    ),
    Rule {
        unless_next: &["ranch", "ranches"],
        ..audience(
            r"(a|the|single|young|cool|chill|for|of|some|two|three|four|\d) dudes?|pronouns (match|matching|that match|agree with|line up with)",
            Sex,
        )
    },
    Rule {
        lawful_context: Lawful::in_sentence(&[
            "passport or",
            "or passport",
            "or any",
            "or other",
            "or another",
            "or a ",
            "or your",
            "any government",
            "any valid",
        ]),
        ..audience(r"(show|present|provide|bring|have|hold)s? (a |an |your )?(u\.?s\.?|us|american) passports?", RaceOrNationalOrigin)
    },
    audience(
        r"(no|zero) (modifications|alterations|changes)( (allowed|permitted|approved|accepted))?[,;:—-]? (so |including |like |such as |even |not even )?(no )?(grab bars|ramps?|handrails|stair ?lifts|wider doors)",
        Disability,
    ),
    // The forty-first corpus's round: a building's "profile", a photo of the applicant, other
    // faiths' displays refused, oxygen users turned away, expecting applicants sent elsewhere,
    // assistance animals scorned, disability income refused, an evacuation unaided, fasting.
    audience(r"fits? (our|the|this) (building|community|neighbou?rhood|complex)('s|’s)? profile", Steering),
    audience(
        r"(photo|picture|pic|selfie|headshot)s? of (the |each |every )?applicants?( is| are)? (required|needed|mandatory)",
        RaceOrNationalOrigin,
    ),
    audience(
        r"(decorations?|displays?) (for|of) (other|non-christian|non-christmas) (holidays|faiths|religions)\b[^.;]{0,20}\b(not (permitted|allowed)|prohibited|banned)|during fasting (months?|periods?|seasons?)",
        Religion,
    ),
    audience(
        r"(not suitable|unsuitable|not a fit|not ideal|not recommended) for (oxygen|wheelchair|walker|cane|scooter|mobility[- ]aid) users|so-called (comfort|support|emotional[- ]support|service|assistance) (animals?|dogs?)|(ssdi|ssi|disability) (income|benefits|award letters?|payments|checks)( and [a-z ]{1,20})?( are| is)? not (accepted|counted|considered)|(able to|can) (evacuate|exit)( [a-z-]+){0,4} (on (their|your|his|her) own|unassisted|without (help|assistance))",
        Disability,
    ),
    audience(
        r"(applicants?|tenants?|renters?|those|anyone|people|women|couples|families) who are (expecting|pregnant)",
        FamilialStatus,
    ),
    // A pregnancy told by a figure of speech, children as "little visitors", a household capped
    // at one child.
    audience(
        r"(got|have|has|having|with) (a )?bun in the oven|(won't|will not|wouldn't|would not|doesn't|does not|don't|do not|never|no) (be )?(having|have|has|get|getting|host|hosting|bring|bringing)( any)? little (visitors|guests|ones?|people|feet)( over)?|\bno little (visitors|guests|feet)|(cap|caps|capped|limit|limits|limited|restrict|restricts|max|maximum)( it| them| occupancy| that)? (at|to|of) (one|1|a single|two|2) (little ones?|kids?|child|children|bab(y|ies)|toddlers?|youngsters?)\b",
        FamilialStatus,
    ),
    // More of the forty-first's: a bedroom shared by one sex, minors kept from the common areas,
    // a faith's scroll on the door frame, a deposit for wheels, drivers no longer, listings shown
    // to some families only, retirement plans asked.
    audience(r"(shall|must|should|will) be (of )?the same (sex|gender)", Sex),
    audience(
        r"(occupants?|residents?|tenants?|children|kids|minors|anyone|persons|people) under (the age of )?(eighteen|sixteen|fourteen|twelve|18|16|14|12)( years( of age)?)? (shall|must|may|can|will) not (use|enter|be in|be on|play in|play on)",
        FamilialStatus,
    ),
    audience(r"(small |little )?scrolls or cases|(door ?frames?|doorposts?)\b[^.;]{0,40}\bscrolls?", Religion),
    audience(
        r"(extra|additional|higher|larger|separate) ([a-z]+ )?(deposits?|fees?|charges?|rent)\b[^.;,]{0,40}\b(using|uses|who use|with) (a |an )?(wheel ?chairs?|chair|walkers?|scooters?|canes?|mobility aids?)|(wheel ?chair|walker|scooter|mobility[- ]scooter|power[- ]chair|mobility[- ]aid) users? (pay|must pay|are charged|get charged|will be charged|owe) (an? )?(extra|additional|higher|larger|separate|more)\b|(who|that) (no longer|can't|cannot|can no longer) drive\b[^.;]{0,40}\b(co-?signs?|co-?signers?|guarantors?|a relative)",
        Disability,
    ),
    audience(r"(showed|show|shows|showing) ([a-z]+ ){0,3}(units?|homes?|listings?|houses?|apartments?) only to", Steering),
    audience(r"(whether|if) (you|they|applicants?|tenants?) (plan|intend|expect)s? to retire", Age),
    // A couple probed, a graduation year asked, a faith's observances and objects refused, a
    // client steered to where "they'll be more comfortable", an assistance animal charged as a pet.
    audience(r"just friends['’\x22”]? or (together|a couple|partners|dating|an item)", Sex),
    audience(
        r"(year|date|when) (you|they|applicants?|tenants?) (graduated|finished) (high school|college|school)|(high school|college) graduation (year|date)s?",
        Age,
    ),
    audience(
        r"(for|during|because of|due to) (their|his|her) (weekly |weekend |religious |sabbath )?observances?|(decorations?|displays?|ornaments)\b[^.;]{0,40}\b(must|should|need to|have to) be (christmas|easter|christian)",
        Religion,
    ),
    audience(
        r"(more|less|better) (your|their|his|her) (speed|style|fit|scene),? (culturally|ethnically|racially)\b|(culturally|ethnically|racially) (a better fit|more your speed|better suited|more comfortable|more at home)|(steer|steered|steering|steers) (them|him|her|buyers?|clients?|tenants?|applicants?|people|folks|families) (to|toward|towards|away from|elsewhere)|where (they|he|she)('ll|’ll| will| would|'d|’d) (be|feel) more comfortable",
        Steering,
    ),
    audience(
        r"(service|assistance|support|emotional[- ]support|therapy|guide) (animals?|dogs?)\b[^.;,]{0,40}\b(still|also|must|will|shall|have to|has to|need to|needs to) (pay|owe|be charged|be subject to)( the| a| an)?( \$?\d+)? (pet (deposit|fee|rent)s?|breed (limits|restrictions))",
        Disability,
    ),
    // Forms only in English, an interpreter refused, birthplace and years in the country asked,
    // diversity welcomed "just not in this building", a look checked before a showing.
    // "in English or Spanish" offers a choice.
    Rule {
        unless_next: &["or", "and", "&", "/", "and/or"],
        ..audience(
            r"(applications?|forms?|paperwork|documents?)\b[^.;]{0,30}\b(must|shall|need to|needs to|have to|has to|will only|can only) be (completed|filled out|filled in|submitted|written|signed) in english( only)?",
            RaceOrNationalOrigin,
        )
    },
    audience(
        r"(will not|won't|do not|don't|cannot|can't|refuse to|does not|doesn't) (process|accept|review|consider) (any |the |your )?(applications?|forms?|paperwork|documents?|leases?)\b[^.;]{0,30}\b(in (spanish|chinese|mandarin|cantonese|vietnamese|korean|arabic|russian|tagalog|another language|other languages|a foreign language)|(with|through|using|via) (an? )?(interpreter|translator))",
        RaceOrNationalOrigin,
    ),
    audience(
        r"(what|which) (country|nationality) (are|is|were) (you|your (family|parents|spouse|partner))( originally)? from|where (are|were) you (originally from|born)|where (is|was) your (family|accent|name|surname) (originally )?from|how long have you (lived|been|resided) in (the )?(u\.?s\.?a?|united states|america|this country)\b",
        RaceOrNationalOrigin,
    ),
    audience(
        r"(love|loves|like|likes|support|supports|value|values|welcome|welcomes|celebrate|celebrates) diversity\W{0,8}(just |but |only )?not (in|here|on|at|near) |diversity is (great|fine|nice|good|wonderful)\W{0,3} (just|but) not (here|in|on)\b",
        Steering,
    ),
    audience(
        r"(what|how) (the|an?|this|that) (applicant|tenant|buyer|renter|caller|prospect) (looks|appears) like|du-?rags?|do-?rags?|sagging (pants|jeans)",
        RaceOrNationalOrigin,
    ),
    // Guide dogs kept to the lobby, an assistance animal's own fee, a condition or treatment to
    // describe, medication-assisted recovery refused.
    audience(
        r"(guide|service|assistance|seeing[- ]eye) (dogs?|animals?)\b[^.;]{0,40}\b(in|to) the (lobby|hallways?|common areas?|ground floor|entrance|front desk)[^.;]{0,12}\bonly\b|(guide|service|assistance|seeing[- ]eye) (dogs?|animals?)\b[^.;,]{0,40}\b(may not|must not|cannot|can ?not|can't|are not (allowed|permitted) to) (enter|go into|be in|use|accompany)\b|(guide|service|assistance|seeing[- ]eye) (dogs?|animals?) (must|have to|need to) (stay|remain|be kept) (in|on|at) the (lobby|hallways?|common areas?|ground floor|entrance)",
        Disability,
    ),
    Rule {
        unless_before: &["no", "without", "zero", "waive", "waived", "never", "or"],
        lawful_context: Lawful::in_sentence(&[
            "don't charge",
            "do not charge",
            "never charge",
            "not required",
            "none",
            "$0",
            "prohibited",
            "illegal",
            "waived",
            "no charge",
            "free of charge",
            "not charged",
            "never charged",
            "no fee",
            "no fees",
            "no additional",
            "without charge",
            "no deposit",
            "no pet deposit",
            "no pet fee",
            "no pet rent",
        ]),
        ..audience(
            concat!(
                assistance_animal!(),
                r"( requests?)? (are |is )?subject to (a |an )?(\$?[\d,]+ )?(processing |application |pet |animal |extra |additional )?(fees?|deposits?|charges?)|",
                r"(esa|emotional[- ]support animal|assistance animal|service animal|support animal|service dog|guide dog)s? ((processing|application|registration|verification|administrative|admin|letter|review|screening) )?(fees?|charges?|deposits?)|(esa|assistance animal|service animal|support animal) (owners|holders|handlers) (pay|owe)|(fee|deposit|charge) (for|per) (each |every |an? )?(esa|assistance animal|service animal|support animal|emotional[- ]support animal)s?",
            ),
            Disability,
        )
    },
    Rule {
        lawful_context: Lawful::in_sentence(DISABILITY_PROVIDED_FOR),
        ..audience(
            r"(describ|detail|explain|disclos|list)(e|es|ing|ed)? ((their|your|his|her) (medical |mental health |health |psychiatric )?|(the|any) (medical|mental health|health|psychiatric) )(conditions?|diagnos[ie]s|illness(es)?|disabilit(y|ies)|impairments?|medications?|treatment)\b|(tell|inform) us about (your|their|any) ((physical|medical|mental|mental health|health|psychiatric) )?(treatment|diagnos[ie]s|conditions?|medications?|hospitali[sz]ations?|disabilit(y|ies)|impairments?)|(stat|specify|nam|giv|show|reveal|confirm)(e|es|ed|ing|ying|ies|ied)? (your|their|his|her|the|an?) (exact |specific |precise |full |actual |underlying )?(medical )?diagnos[ie]s|(tell|give|show) us (your|their) (exact |specific )?diagnos[ie]s|(have you|has anyone in your household|have they) (ever )?been hospitali[sz]ed|(no|not|nobody|no one|anyone|tenants?|residents?|applicants?)\b[^.;]{0,20}\b(on|using|taking|prescribed) (methadone|suboxone|buprenorphine|antipsychotics|psychiatric (meds|medications?))",
            Disability,
        )
    },
    // A faith's displays banned (unless every display is), its believers mocked.
    Rule {
        lawful_context: Lawful::in_sentence(&[
            "all holiday",
            "all decorations",
            "all seasonal",
            "any decorations",
            "all displays",
            "any holiday",
            "all religious and secular",
            "decorations, including",
            "and other decorations",
            "other holiday",
            "christmas and",
            "and christmas",
            "christmas, ",
        ]),
        ..audience(
            r"(menorahs?|mezuzahs?|mezuzot|prayer rugs|prayer mats|prayer flags|crucifixes|rosar(y|ies)|crosses on [a-z ]{1,20}doors?|hijabs?|headscarves|yarmulkes?|kippahs?|turbans?|diyas|(diwali|ramadan|eid|hanukkah|chanukah) (lights|lanterns|decorations|displays)|crescent moons?|islamic crescents?|crescent displays?|nativity( scenes?)?)\b[^.;]{0,60}\b((will be|are|is|must be|get|gets) )?(removed|taken down|banned|prohibited|forbidden|not allowed|not permitted|aren't allowed|aren't permitted|isn't allowed|isn't permitted|(can't|cannot|may not|must not) be (displayed|hung|shown|put up))",
            Religion,
        )
    },
    audience(r"bible[- ]?thumpers?|holy rollers|jesus freaks|proselytizing types", Religion),
    // Children kept out by a guest's age ("guests under 12 may not stay", where "visitors under
    // 16 are not allowed in the hot tub" is a pool rule and "guests under 21 are not permitted to
    // drink" an alcohol rule: nothing may follow the refusal but the property).
    Rule {
        lawful_context: OLDER_PERSONS_HOUSING,
        unless_next: &[
            "to", "in", "into", "inside", "at", "near", "around", "on", "without", "unless", "unaccompanied", "alone",
            "unsupervised", "except", "after", "before", "during",
        ],
        ..audience(
            r"(guests?|visitors?|anyone|no one|nobody|occupants?|residents?|children|kids|minors) (under|younger than|below) (the age of )?\d\d?( years( old| of age)?)? (may not|must not|can't|cannot|can not|are not|aren't|is not|isn't|won't|will not) (stay|sleep|reside|live|book|be (allowed|permitted|accommodated|admitted|welcome)( to (stay|sleep|book|reside|live))?|(allowed|permitted) to (stay|sleep|book|reside|live)|allowed|permitted|welcome|accommodated|admitted)( (on|at|in) (the )?(property|premises|unit|home|house|cottage|cabin))?|(no|not accepting|don't accept|do not accept|cannot accept|can't accept|won't accept|will not accept) (guests|visitors|children|kids|minors|occupants|anyone) (under|younger than|below) (the age of )?\d\d?",
            Age,
        )
    },
    // A whole booking party held to an age above majority ("everyone in your party is over 21",
    // "all guests must be at least 25 years old").
    Rule {
        lawful_context: OLDER_PERSONS_HOUSING,
        unless_next: &[],
        ..audience(
            r"(guests|visitors|everyone|everybody|all (guests|occupants|members|adults|visitors)|each guest|every guest)( in (your|the) (party|group|household)| staying| booking)? (is|are|must be|need to be|needs to be|should be|has to be|have to be) ((over|older than|at least|above) (19|[2-9]\d)|(19|[2-9]\d)( years old| years of age)? (or|and) (older|over|up)|(19|[2-9]\d)\+)",
            Age,
        )
    },
    // Infants counted from birth, a household's make-up or growth screened, additions to it
    // refused, strollers and diapers as a stage of life, residents with children housed apart.
    Rule {
        lawful_context: Lawful::in_sentence(OCCUPANCY_CODE),
        ..audience(
            r"(counts?|counted) from (the day (they are|they're|he is|she is|you are) born|birth)|household (composition|makeup|make-up) (that|which) (suits|fits|matches)|(household|family) (composition|makeup|make-up) (will be|is|are|gets|must be) (reviewed|screened|considered|evaluated|checked|approved)|how old (are|is) (they|the (kids|children|occupants|residents)|your (kids|children)|everyone)\b|(suitable|appropriate|compatible|right) household (composition|makeup|make-up)|(plans?|planning) (for|to|on) (expand|expanding|grow|growing|add to|adding to|enlarge|enlarging) (your|the|their) (household|family)|no (new )?(additions?|members?) to (the|your) household|(a )?single[- ]occupan(t|cy) only|stroller[- ]free|(past|beyond) the diaper (years|stage)|(anyone|anybody|someone|kids|little ones) (still )?in diapers\b[^.;]{0,40}\b(isn't|is not|not) (the|a|your) (place|fit|home|spot|rental)|no (babies|baby|kids|little ones|bun in the oven) on the way|nothing on the way in the next|(expecting|anticipating) a new arrival|(no|without) school[- ]age(d)? (residents|children|kids|occupants|tenants)|(residents|tenants|families|households|those|owners|buyers) with (strollers|kids|children|babies|infants|toddlers) (are|will be|get|must be) (assigned|placed|housed|moved|steered|limited|restricted|relocated)",
            FamilialStatus,
        )
    },
    // Help refused to guests who need it, a mobility need turned away, modifications refused by
    // name, applicants who cannot manage stairs not considered, a mobility aid's user made to
    // insure; a fixture or assistance animal asked about and refused in a question's answer
    // ("Q: Can I install a grab bar? A: Sorry, ..."), a parking space near the door refused.
    Rule {
        lawful_context: Lawful::in_sentence(DISABILITY_PROVIDED_FOR),
        ..audience(
            r"(use|uses|using|with) (a |an )?(motorized |motorised |power |powered |electric )?(mobility scooters?|motorized scooters?|wheelchairs?|walkers?|mobility devices?|power chairs?)\b[^.;]{0,40}\b(must|will|shall|have to|has to|need to|needs to) (sign|pay|carry|provide|obtain|purchase|buy)|(must|should|need to|needs to|have to|has to) be able to (carry|climb|walk|hike|lift|manage|navigate|handle)\b[^.;]{0,60}\b(unassisted|without (help|assistance))|(no (bookings|reservations|stays) (from|for)|(cannot|can't|won't|will not|don't|do not|are unable to|aren't able to) (host|accept|accommodate|take|book|rent to)) (any )?(guests|tenants|renters|applicants|anyone|people|those)( [a-z]+){0,2} who (will |would |might |may )?(need|needs|require|requires) (help|assistance)|mobility (stuff|things|challenges|concerns|difficulties|needs) (going on|to consider)|(no|never) (tenant[- ]installed |tenant |unit |structural |physical |permanent |additional )?(alterations?|modifications?|changes)\b[^.;]{0,40}\b(including|such as|like|even|e\.g\.,?) (a )?(grab[- ]bars?|ramps?|handrails?|wheelchair ramps?|widened doors)|(alterations?|modifications?|changes)\b[^.;,]{0,40}\b(including|such as|like|even) (a )?(grab[- ]bars?|ramps?|handrails?|wheelchair ramps?|widened doors)\b[^.;,]{0,30}\b(not (be )?(permitted|allowed)|prohibited|forbidden|banned)|(unable to|cannot|can't|won't|will not|do not|don't) consider (anyone|applicants|tenants|people|renters) who (can't|cannot|can not|are unable to|aren't able to) (climb|use|manage|walk|navigate|take|handle) (the )?(stairs|steps|flights|three flights|two flights)|(install|add|put in|put up|fit|build|bring|have|has|keep) (a |an |my |our |my own |our own )?(grab[- ]bars?|ramps?|handrails?|hand rails?|stair ?lifts?|chair ?lifts?|roll-in showers?|shower (seats?|chairs?|benches)|raised toilet( seat)?s?|(service|assistance|guide|support|therapy|emotional[- ]support|seeing[- ]eye) (animals?|dogs?|cats?))\b[^?.!;]{0,80}\? (a|answer|manager|landlord|landlady|owner|host|agent)[:.] (sorry|no|nope|unfortunately|afraid not)\b(?: problem| worries)?|(unable to|not able to|cannot|can't|won't|will not|do not|don't) (reserve|assign|offer|provide|designate|hold|set aside) (a |an |any )?(parking )?(space|spot|stall|bay)s? (closer|nearer|near|next) (to )?(the |your )?(entrance|door|building|elevator|lift|unit|lobby)",
            Disability,
        )
    },
    // A shared heritage asked of the people wanted, a people kept the same, an area said not to
    // be diverse, accents not "done" (a bungalow may share the heritage of its street).
    audience(
        r"(who|that) (share|shares) (the|their|our|your) (heritage|ancestry|cultural background|background|roots|culture)\b|(buyers|tenants|residents|families|applicants|neighbou?rs|people|members|owners|shareholders) (who )?(share|sharing) (the|their|our|your|a) (heritage|ancestry|background|roots|culture)\b|(same|common|similar|compatible|matching) ((cultural|ethnic|racial|national|religious)(/|,? (and|or) | ))+(backgrounds?|heritage|roots|origins?)|shared (cultural|ethnic|racial) (backgrounds?|heritage|roots|origins?)|(kept|keeps|keep|keeping) (its|their|the) (character,? and (its|their) )?(people|residents|neighbou?rs|population|families),? (the same|unchanged)|(areas?|neighbou?rhoods?|buildings?|communit(y|ies)|towns?|streets?|blocks?|complex) (isn't|is not|aren't|are not) (very |that |super |really |particularly )?diverse|not (a )?(very |that |particularly )?diverse (area|neighbou?rhood|community|town|block|street|building)|(don't|do not|dont|doesn't|does not) (really )?(do|want|like|accept) (an? )?(foreign )?accents?",
        RaceOrNationalOrigin,
    ),
    // Applications only in English ("not only English applications but also Spanish ones" is a
    // choice); an area described by the race, origin or faith of who lives there ("a
    // predominantly white kitchen" is a kitchen and "an all-white area rug" a rug, so the place
    // must follow, and stand alone).
    Rule {
        unless_next: &["rug", "rugs"],
        unless_before: &["not"],
        ..audience(
            concat!(
                r"only (english|english-language) (applications?|forms?|paperwork)|(applications?|forms?|paperwork) (are |is )?(accepted |taken )?in english only|english(-language)? (applications?|forms?) only|only (applications?|forms?) in english|(applications?|forms?) must be (in|written in) english|(mostly|predominantly|largely|primarily|overwhelmingly|majority)[- ](",
                race_origin_or_faith!(),
                r") (area|neighbou?rhoods?|communit(y|ies)|towns?|blocks?|streets?|schools?|districts?|buildings?|complex|city|suburbs?|part of town|side of town)"
            ),
            RaceOrNationalOrigin,
        )
    },
    // Neighbours described as mostly one age or household: dropped, not rewritten ("mostly all
    // buyers" would say nothing). Lawful in housing for older persons.
    Rule {
        lawful_context: OLDER_PERSONS_HOUSING,
        ..audience(
            r"((neighbou?rs|residents|folks|people|everyone|everybody|owners|homeowners|tenants) (here |around here |nearby |in the building |on the block |on this street )?(are|is) (all |mostly |largely |predominantly |primarily |mainly |almost all |nearly all )|most (of )?(the |our )?(neighbou?rs|residents|owners|homeowners|tenants|folks|people) (here )?are |(street|cul-de-sac|block|building|neighbou?rhood) of (mostly )?)(empty[- ]nesters|retirees|seniors|young professionals|young families|families with (kids|children)|couples|singles|older (folks|people|couples)|retired|elderly)",
            Steering,
        )
    },
];

/// An occupancy standard that counts infants and children, as local codes do: no preference.
const OCCUPANCY_CODE: &[&str] = &["consistent with local", "local code", "occupancy code", "occupancy standard"];

/// Words that count occupants by the rooms they sleep in, as occupancy codes do.
const PER_BEDROOM: &[&str] =
    &["per bedroom", "per sleeping room", "per room", "in each bedroom", "for each bedroom", "per br"];

/// Words that make naming children part of a lawful statement: an occupancy code, equipment
/// offered ("a travel cot on request for guests with babies"), a safety sign ("please watch for
/// children and pets").
const CHILDREN_PROVIDED_FOR: &[&str] = &[
    // Housing for older persons under the Housing for Older Persons Act, which the Act exempts.
    "hopa",
    "consistent with local",
    "local code",
    "occupancy code",
    "occupancy standard",
    "request for guests with babies",
    "request for guests with infants",
    "request for guests with toddlers",
    "request for guests with kids",
    "request for guests with children",
    "request for families with babies",
    "request for families with young children",
    "request for families with kids",
    "watch for children",
    "watch for kids",
    "watch out for children",
    "watch out for kids",
    "children at play",
];

/// The sellers, or the writer, described by their age ("the previous owners, a retired couple,
/// added ...", "I'm a retired teacher renting out the guest room"): the age word is excused
/// inside such a phrase only, not wherever else it stands in the sentence.
/// The owners are named as the ones who own or owned it, not as the ones wanted ("the ideal
/// owners, a retired couple").
const SELLERS_DESCRIBED: &[&str] = &[
    // The writer describing themself ("I'm a retired teacher renting out the guest room").
    "i'm a retired",
    "i’m a retired",
    "i am a retired",
    "we're a retired",
    "we are a retired",
    "the seller, a retired",
    "the sellers, a retired",
    "previous owner, a retired",
    "previous owners, a retired",
    "original owner, a retired",
    "original owners, a retired",
    "current owner, a retired",
    "current owners, a retired",
    "the seller, a young",
    "the sellers, a young",
    "the owners, a young",
    "previous owners, a young",
    "original owners, a young",
    "current owners, a young",
];

/// Words that make a practice something offered, not asked of tenants ("an interpreter is
/// available", "sign language at showings on request").
const PRACTICE_PROVIDED_FOR: &[&str] = &[
    "available",
    "provided",
    "provide",
    "arrange",
    "on request",
    "upon request",
    "free",
    "happy to",
    "welcome",
    "bilingual",
    "offer",
    "accommodat",
    "is included",
    "are included",
    "staff",
    "manager",
    "management",
    "office",
    "team",
    "agent",
    "leasing",
];
