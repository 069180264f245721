//! Finding the first listed phrase in a text, with the exceptions that make a match ordinary
//! language (a compound, a room named by a possessive, an institution's proper name).

use super::languages::OTHER_LANGUAGES;
use super::phrases::{Rule, AUDIENCE, CLASS_WORDS, DESCRIBED, MASTER, OLDER_PERSONS_HOUSING, RULES};
use super::text::{is_capitalised, is_shouted, sentence_around, statement_around};
use super::{Category, Policy};
use regex::Regex;
use std::sync::OnceLock;

/// A rule with its pattern compiled, word-bounded and case-insensitive.
pub(super) struct Compiled {
    pub(super) regex: Regex,
    pub(super) rule: &'static Rule,
}

/// Compiles `rules`, each pattern between word boundaries.
pub(super) fn compiled(rules: &'static [Rule]) -> Vec<Compiled> {
    rules
        .iter()
        .filter_map(|rule| {
            // The patterns are constants covered by the tests, so none fails to compile.
            Regex::new(&format!(r"(?i)\b(?:{})\b", rule.pattern)).ok().map(|regex| Compiled { regex, rule })
        })
        .collect()
}

/// Every rule in the order ties are settled: rewrites, audience words, described people, other
/// languages' class words, then the house style when the deployment asks for it.
fn rules(policy: Policy) -> impl Iterator<Item = &'static Compiled> {
    static LIST: OnceLock<Vec<Compiled>> = OnceLock::new();
    static PEOPLE: OnceLock<Vec<Compiled>> = OnceLock::new();
    static DESCRIBED_LIST: OnceLock<Vec<Compiled>> = OnceLock::new();
    static LANGUAGES: OnceLock<Vec<Compiled>> = OnceLock::new();
    static HOUSE: OnceLock<Vec<Compiled>> = OnceLock::new();
    let list = LIST.get_or_init(|| compiled(RULES));
    // After the rewrites, so that where both match at one place the rewrite is tried first.
    let people = PEOPLE.get_or_init(|| compiled(AUDIENCE));
    let described = DESCRIBED_LIST.get_or_init(|| compiled(DESCRIBED));
    let languages = LANGUAGES.get_or_init(|| compiled(OTHER_LANGUAGES));
    let house = HOUSE.get_or_init(|| compiled(std::slice::from_ref(&MASTER)));
    list.iter()
        .chain(people.iter())
        .chain(described.iter())
        .chain(languages.iter())
        .chain(house.iter().filter(move |_| policy.master_to_primary))
}

/// Whether `statement` tells the owners' own history or who the writer is, in a phrase a rule
/// names as excusing its class word ("the owners raised three kids here", "the previous owners,
/// a retired couple") or by describing the owners or the writer around it ("the owner raised her
/// twin boys here", "I'm a Muslim woman in my 30s"; see [`describes_the_owners`] and
/// [`describes_the_writer`]): the statement then says who lived there or who writes, not who is
/// wanted, and the sentence model is not asked about it. Only those count: a word before a match
/// that makes it ordinary language ("we speak", "gym addicts") says nothing of the rest of the
/// statement.
pub(super) fn tells_the_owners_history(statement: &str, policy: Policy) -> bool {
    static RAISED: OnceLock<Option<Regex>> = OnceLock::new();
    // "The owner raised her two daughters here": the words for the children need not be class
    // words for a rule.
    let raised = regex_once(
        &RAISED,
        r"(?i)\b(raised|brought up) (her|his|their|our|my) ([a-z-]+ ){0,2}(kids|children|sons?|daughters?|boys|girls|family|families|twins|grandchildren|grandkids)\b",
    );
    if raised.is_some_and(|raised| raised.is_match(statement)) && !states_a_wish(statement) {
        return true;
    }
    rules(policy).any(|c| {
        c.regex.find_iter(statement).any(|m| {
            let before = statement[..m.start()].trim_end().to_lowercase();
            within_an_ordinary_phrase(statement, m.range(), c.rule.unless_within)
                || (describes_the_owners(&before) && !states_a_wish(statement))
                || (describes_the_writer(&before) && !asks_for_the_same(statement))
                || tells_its_own_story(statement, m.range())
        })
    })
}

/// The first finding in `text`: its byte range and rule. `shares_home`: whether the writer of
/// the text `text` comes from seeks someone to share their home ([`shares_living_quarters`]);
/// `text` may be one question and its answer, read apart from the text around them but in its
/// setting.
pub(super) fn first_match(
    text: &str,
    shares_home: bool,
    policy: Policy,
) -> Option<(std::ops::Range<usize>, &'static Compiled)> {
    rules(policy)
        .filter_map(|c| {
            c.regex
                .find_iter(text)
                .find(|m| {
                    let before = text[..m.start()].trim_end().to_lowercase();
                    // "single-family neighborhood", "pre-owned": a hyphen before means another
                    // word; so does "single" before "family" ("single family neighborhood").
                    let property_type = before.ends_with("single") && m.as_str().to_lowercase().starts_with("famil");
                    let other_word = text[..m.start()].ends_with('-') || property_type;
                    let mut rest = &text[m.end()..];
                    let mut possessive = false;
                    if c.rule.whole_word {
                        // "children's room", "kids' bath": a possessive naming what follows it.
                        // A bare apostrophe makes a plural possessive only after an s: after
                        // another word it closes a quote ("hasn't 'changed' in years").
                        let plural = m.as_str().ends_with(['s', 'S']);
                        for ending in ["'s", "\u{2019}s", "'", "\u{2019}"] {
                            if let Some(after) = rest.strip_prefix(ending) {
                                rest = after;
                                possessive = ending.ends_with('s') || plural;
                                break;
                            }
                        }
                    }
                    let capitalised = |word: Option<&str>| word.is_some_and(is_capitalised);
                    let word_before = before.split_whitespace().last().unwrap_or("");
                    // A place's qualifier may stand a few words before it ("a converted 1920s
                    // chapel", "a former Lutheran church"); other rules' only right before.
                    let qualified = if c.rule.landmark {
                        noun_phrase_before(&before).any(|w| c.rule.unless_before.contains(&w))
                    } else {
                        c.rule.unless_before.contains(&word_before)
                    };
                    if qualified
                        || within_an_ordinary_phrase(text, m.range(), c.rule.unless_within)
                        || (describes_the_owners(&before) && !states_a_wish(text))
                        || ((describes_the_writer(&before) || (shares_home && opens_as_the_writer(text, m.range())))
                            && !asks_for_the_same(text))
                        || tells_its_own_story(text, m.range())
                    {
                        return false;
                    }
                    if c.rule.at_phrase_end && !ends_a_phrase(rest) {
                        return false;
                    }
                    // "St. Anne's Catholic Church", "the Sri Venkateswara temple": a building
                    // named by the words before it, unless they name a class ("the Korean church").
                    let name_before = named_by_words_before(&text[..m.start()], capitalised(Some(m.as_str())));
                    let mut following = rest.split_whitespace();
                    let (first, second) = (following.next(), following.next());
                    let named = capitalised(Some(m.as_str())) && capitalised(first);
                    // "Children's Hospital", "the Islamic Center of Riverside", "Jewish Community
                    // Center": an institution's proper name.
                    // "Our Lady of Peace": a church's name.
                    let institution = (capitalised(Some(m.as_str()))
                        && ((possessive && capitalised(first)) || names_an_institution(rest)))
                        || (m.as_str() == "Lady" && word_before == "our");
                    // "Temple Beth Shalom", "the church on Main Street": a landmark, not a draw.
                    let landmark = c.rule.landmark
                        && (named || name_before || (matches!(first, Some("on" | "at")) && capitalised(second)));
                    // A class word in capitals amid lower-case words is shouted, not a name
                    // ("Stylish home, NO BOYS ALLOWED!").
                    let shouted = is_shouted(m.as_str());
                    // "Mt. Bachelor", "the Mother Lode", "Golden Years Antiques", "a Boy Scout
                    // camp": a class word inside a place's or an organisation's proper name. The
                    // article a rule reads with it is no part of the name ("the Blind Pass beach
                    // access" for "the blind").
                    let name_start = m.start() + if m.as_str().starts_with("the ") { "the ".len() } else { 0 };
                    let named_words = &text[name_start..m.end()];
                    let in_a_name = c.rule.whole_word
                        && !c.rule.landmark
                        && capitalised(Some(named_words))
                        && (!named_words.contains(' ') || named_words.split(' ').all(is_capitalised))
                        && (PLACE_TITLES.contains(&word_before)
                            || (!shouted && inside_proper_name(text, name_start..m.end(), first)));
                    if institution || landmark || in_a_name {
                        return false;
                    }
                    let next = first.unwrap_or("").to_lowercase();
                    let next = next.trim_end_matches([',', ';', ':', '!', '?', ')', '.']);
                    // "family-sized", "man-made": the start of a compound, not a word of its own.
                    // "LGBTQ+-owned" too.
                    let compound = rest.trim_start_matches('+').starts_with(['-', '\u{2010}']);
                    // "a couple of cars" names a number, not a household.
                    let a_number = next == "of" && m.as_str().to_lowercase().ends_with("couple");
                    // "bachelor's and master's degrees": diplomas named together.
                    let diplomas = possessive
                        && m.as_str().eq_ignore_ascii_case("bachelor")
                        && matches!(next, "and" | "or" | "&" | "program" | "programs");
                    // "men's and women's locker rooms": facilities named in pairs; the second
                    // possessive is judged by what it names.
                    let paired = possessive
                        && matches!(next, "and" | "or" | "&")
                        && second.is_some_and(|w| w.ends_with("'s") || w.ends_with("\u{2019}s"));
                    // "Families welcome", "Children are welcome": households with children
                    // welcomed, not preferred ("Only families welcome" is a preference).
                    let welcome = |word: Option<&str>| {
                        word.is_some_and(|w| {
                            let w = w.trim_end_matches([',', ';', ':', '!', '.']);
                            w.eq_ignore_ascii_case("welcome") || w.eq_ignore_ascii_case("welcomed")
                        })
                    };
                    // "Families with children are welcome": the household named more closely.
                    let (next_but_with, second_but_with) = match rest.split_whitespace().collect::<Vec<_>>()[..] {
                        [with, "children" | "kids" | "babies" | "toddlers", after, after_that, ..]
                            if with.eq_ignore_ascii_case("with") =>
                        {
                            (after.to_lowercase(), Some(after_that))
                        }
                        _ => (next.to_string(), second),
                    };
                    let next_but_with = next_but_with.trim_end_matches([',', ';', ':', '!', '.']);
                    let welcomed = c.rule.category == Category::FamilialStatus
                        && !word_before.eq_ignore_ascii_case("only")
                        && (welcome(Some(next_but_with))
                            || (matches!(next_but_with, "are" | "always") && welcome(second_but_with)));
                    let listed = |word: &str| {
                        let word = word.to_lowercase();
                        let word = word
                            .trim_end_matches([',', ';', ':', '!', '?', ')', '.', '\'', '"', '\u{2019}', '\u{201d}']);
                        let word = word.trim_end_matches("'s").trim_end_matches("\u{2019}s");
                        c.rule.unless_next.contains(&word)
                    };
                    // "Grandma's rose garden", "kids' bunk room": a possessive names what the noun
                    // phrase after it ends in.
                    let owns_a_thing = possessive && noun_phrase_after(rest).any(listed);
                    // "Diwali and Holi festivals", "Christian and Jewish schools": two names on
                    // one thing.
                    let names_joined = matches!(next, "and" | "or" | "&")
                        && capitalised(second)
                        && following.next().is_some_and(listed);
                    let ordinary = other_word
                        || compound
                        || a_number
                        || diplomas
                        || paired
                        || welcomed
                        || owns_a_thing
                        || names_joined
                        || listed(next);
                    !ordinary
                        && !lawful_in_context(text, m.range(), c.rule, shares_home)
                        && !states_equal_opportunity(text, m.range())
                })
                .map(|m| (m.range(), c))
        })
        .min_by_key(|(range, _)| range.start)
}

/// The first words of the noun phrase that starts `rest`: at most three, up to punctuation or a
/// preposition ("rose garden' along" gives "rose", "garden'").
fn noun_phrase_after(rest: &str) -> impl Iterator<Item = &str> {
    let mut ended = false;
    rest.split_whitespace()
        .take(3)
        .take_while(|w| {
            !matches!(w.to_lowercase().as_str(), "in" | "on" | "of" | "at" | "for" | "with" | "to" | "from" | "by")
        })
        .take_while(move |w| {
            let take = !ended;
            ended = w.ends_with([',', ';', ':', '.', '!', '?']);
            take
        })
}

/// The words of the noun phrase that ends where `before` (lower-case) ends, nearest first: at most
/// three, back to an article, a possessive pronoun or punctuation ("a converted 1920s" gives
/// "1920s", "converted").
fn noun_phrase_before(before: &str) -> impl Iterator<Item = &str> {
    const PHRASE_STARTS: &[&str] = &["a", "an", "the", "this", "that", "our", "its", "their", "his", "her", "your"];
    before.split_whitespace().rev().take(3).scan(false, |ended, word| {
        // A word with punctuation after it ends an earlier phrase ("the old mill, church").
        if *ended || PHRASE_STARTS.contains(&word) || word.ends_with([',', ';', ':', '.', '!', '?']) {
            *ended = true;
            return None;
        }
        Some(word)
    })
}

/// Title words that start a place's name ("Mt. Bachelor", "Fort Christian", "Lake Jackson").
const PLACE_TITLES: &[&str] = &["mt.", "mt", "mount", "mtn.", "fort", "ft.", "cape", "port", "lake", "camp"];

/// Words that, capitalised after a class word, still name people or a preference ("a Christian
/// Family", "Jewish Tenants Only"): the pair is not a proper name.
const PEOPLE_AFTER: &[&str] = &[
    "tenant",
    "tenants",
    "buyer",
    "buyers",
    "renter",
    "renters",
    "resident",
    "residents",
    "family",
    "families",
    "people",
    "person",
    "persons",
    "couple",
    "couples",
    "applicant",
    "applicants",
    "occupant",
    "occupants",
    "neighbor",
    "neighbors",
    "neighbour",
    "neighbours",
    "folks",
    "household",
    "households",
    "individual",
    "individuals",
    "roommate",
    "roommates",
    "housemate",
    "housemates",
    "professional",
    "professionals",
    "student",
    "students",
    "owner",
    "owners",
    "only",
    "preferred",
    "welcome",
    "wanted",
    "community",
    "neighborhood",
    "neighbourhood",
    "area",
    "crowd",
];

/// Where the title starts in `before` (a sentence up to a match) when a label naming a title
/// ends before it ("Brochure headline:", "Subject:", "Tagline:").
fn titled_after_label(before: &str) -> Option<usize> {
    const TITLES: &[&str] = &["headline", "title", "tagline", "slogan", "subject", "banner", "heading"];
    let colon = before.rfind(':')?;
    let label = before[..colon].split_whitespace().next_back()?.to_lowercase();
    TITLES.contains(&label.as_str()).then_some(colon + 1)
}

/// Whether the capitalised class word at `range` of `text`, followed by the word `next`, is part
/// of a proper name: a capitalised word that names neither people nor a class follows it ("the
/// Mother Lode", "the Boy Scout camp") or comes before it without starting the sentence ("Mt.
/// Zion Baptist hosts ..."). Never in a sentence written in title case or capitals, where a
/// capital says nothing.
fn inside_proper_name(text: &str, range: std::ops::Range<usize>, next: Option<&str>) -> bool {
    let around = sentence_around(text, range.clone());
    let sentence = &text[around.clone()];
    // "Father Tom's Pub", "Mother Mary's Kitchen": a class word before a capitalised possessive
    // starts a business's or a person's name, even in a sentence of names.
    let possessive_name = |word: &str| {
        let bare = word.trim_end_matches([',', '.', ';', '!', '?', ')']);
        let owner = bare.strip_suffix("'s").or_else(|| bare.strip_suffix("\u{2019}s"));
        owner.is_some_and(|owner| is_capitalised(owner) && !names_people(&owner.to_lowercase()))
    };
    if next.is_some_and(possessive_name) {
        return true;
    }
    // "Listed by Christian White, Broker": a person named after the words that present an agent.
    if is_capitalised(&text[range.clone()])
        && next.is_some_and(is_capitalised)
        && presents_an_agent(&text[..range.start])
    {
        return true;
    }
    // Title case or capitals: every word of four letters or more after the first capitalised,
    // past a label that says a title follows ("Brochure headline: Where Young Professionals ...").
    let titled = titled_after_label(&text[around.start..range.start]).map_or(sentence, |start| &sentence[start..]);
    let mut longer_words =
        titled.split_whitespace().skip(1).filter(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 4);
    if longer_words.all(is_capitalised) {
        return false;
    }
    // Neither a class nor people: "Lode" or "Zion" may join a name, "Tenants" or "Korean" not.
    let joins_a_name = |word: &str| {
        let word = word.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
        !PEOPLE_AFTER.contains(&word.as_str())
            && !DAYS.contains(&word.as_str())
            && !DESCRIBING.contains(&word.as_str())
            && !names_a_class(&word)
            && !names_people(&word)
    };
    // "the Mother Lode": a capitalised word after.
    let before_a_name = next.is_some_and(|w| is_capitalised(w) && joins_a_name(w));
    // "Mt. Zion Baptist", "owned by Grace Episcopal": a capitalised word before that does not
    // start the sentence ("Seeking Christian tenants").
    let mut earlier = text[around.start..range.start].split_whitespace().rev();
    let after_a_name = earlier.next().is_some_and(|w| {
        is_capitalised(w)
            && !w.ends_with([',', ';', ':'])
            && joins_a_name(w)
            // "attend Grace Baptist" names a congregation joined, not a place.
            && earlier.next().is_some_and(|w| !JOINING.contains(&w.to_lowercase().as_str()))
    });
    before_a_name || after_a_name
}

/// Whether the text before a name ends in words that present the agent, host or contact of a
/// listing ("Listed by", "Showing agent:", "co-listed with", "Contact"): the capitalised words
/// after them are a person's name, even where a word of it names a class ("Christian White").
fn presents_an_agent(before: &str) -> bool {
    static PRESENTS: OnceLock<Option<Regex>> = OnceLock::new();
    regex_once(
        &PRESENTS,
        r"(?i)\b((listed|presented|offered|represented|marketed|hosted|shown|co-listed|brokered) (by|with)|courtesy of|((listing|showing|buyer's|buyers'|seller's|co-listing) )?agents?:?|brokers?:|realtors?\W*:|contact:?|call|text|email|ask for)\s*$",
    )
    .is_some_and(|presents| presents.is_match(before))
}

/// Whether `statement` only names a listing's people: it opens with an agent's label and the
/// rest is capitalised names ("Showing agent: Hope Young", "co-listed with Grant Oldman"). Names
/// are not read for what their words mean.
pub(super) fn only_names_agents(statement: &str) -> bool {
    static OPENS: OnceLock<Option<Regex>> = OnceLock::new();
    let label = |word: &str| {
        matches!(
            word.trim_matches(|c: char| !c.is_alphanumeric() && c != '-').to_lowercase().as_str(),
            "listed"
                | "co-listed"
                | "presented"
                | "hosted"
                | "shown"
                | "by"
                | "with"
                | "and"
                | "agent"
                | "agents"
                | "listing"
                | "showing"
                | "broker"
                | "realtor"
                | "contact"
                | "courtesy"
                | "of"
                | "open"
                | "house"
        )
    };
    let opens_with_a_label = regex_once(
        &OPENS,
        r"(?i)^\W*((open house )?(listed|presented|hosted|shown|co-listed) (by|with)|courtesy of|((listing|showing|co-listing) )?agents?\b|brokers?\b|realtors?\b|contact\b)",
    )
    .is_some_and(|opens| opens.is_match(statement));
    opens_with_a_label
        && statement.split_whitespace().all(|w| label(w) || is_capitalised(w) || !w.chars().any(char::is_alphabetic))
}

/// Days, which are capitalised before a faith's observance ("a Saturday Sabbath", "the Wednesday
/// Bible study") without naming anything.
const DAYS: &[&str] = &["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];

/// Words that describe a person, capitalised in a name-like pair ("a Young Christian").
const DESCRIBING: &[&str] = &[
    "young",
    "older",
    "single",
    "devout",
    "good",
    "nice",
    "practicing",
    "practising",
    "strong",
    "committed",
    "true",
    "real",
    "quiet",
    "respectful",
    "responsible",
];

/// Verbs of belonging to a congregation, before its name.
const JOINING: &[&str] =
    &["attend", "attends", "attending", "join", "joins", "joining", "members", "member", "belong", "belongs"];

/// Whether `word` alone is a word the rules read as people of a class ("Woman", "Seniors").
fn names_people(word: &str) -> bool {
    rules(Policy::default())
        .filter(|c| c.rule.whole_word && !c.rule.landmark)
        .any(|c| c.regex.find(word).is_some_and(|m| m.len() == word.len()))
}

/// Whether the words before a place of worship (`before`) are its proper name: the last is
/// capitalised and does not end a sentence. A capitalised place ("Catholic Church") takes any
/// such word; a lower-case one ("the Sri Venkateswara temple") only a word that is not a class
/// ("the Korean church") and does not start the sentence ("Near temples").
fn named_by_words_before(before: &str, place_capitalised: bool) -> bool {
    let mut words = before.split_whitespace().rev();
    let Some(last) = words.next() else { return false };
    if !is_capitalised(last) || last.ends_with(['.', '!', '?']) {
        return false;
    }
    if place_capitalised {
        return true;
    }
    let starts_sentence = words.next().is_none_or(|w| w.ends_with(['.', '!', '?', ';', ':']));
    !starts_sentence && !names_a_class(last)
}

/// `pattern` compiled once into `cell`; `None` when it does not compile (every pattern here is a
/// literal the unit tests run, so that is a bug, not an input).
pub(super) fn regex_once(cell: &'static OnceLock<Option<Regex>>, pattern: &str) -> Option<&'static Regex> {
    cell.get_or_init(|| Regex::new(pattern).ok()).as_ref()
}

/// Whether the (lower-case) text before a class word makes it a description of the people who
/// sell, own, once owned or built the home, not of anyone sought: "the seller is a retired
/// teacher", "the original owners were a Greek family", "built in 1920 by Italian immigrants",
/// "the landlord is a retired Army vet". A landlord or an owner who stays is described only
/// after an article ("is a", ", a"): "the landlord is more comfortable renting to locals" is a
/// preference. So does their own family: "the owner raised her twin boys here", "the sellers used
/// it as a homework station for their kids", "the owner is downsizing now that the grandkids have
/// moved", "our family celebrates Diwali, so the photos show lights", "the previous owners kept
/// kosher". Who they are may be the ground of a preference ("Landlord is LDS and would like
/// tenants who ..."), so the caller also requires that the text states no wish. It applies to
/// every rule's match.
fn describes_the_owners(before: &str) -> bool {
    static OWNERS: OnceLock<Option<Regex>> = OnceLock::new();
    regex_once(
        &OWNERS,
        r"(^|[^a-z])((sellers?|vendors?|builders?|(original|previous|former|first) (owners?|homeowners?|landlords?|landlady|landladies))(, (a|an|both|all|two)|( (is|are|was|were))( (a|an) [a-z-]+| (a|an|both|all|two))?)|(owners?|homeowners?|landlords?|landlady|landladies)(,| (is|are|was|were)) (a|an)|(built|founded|settled|designed|restored|(once|originally|previously) owned) (in (the )?\d{4}s? )?by( (a|an|the))?( [a-z-]+)?|(raised|brought up) (her|his|their|our|my)( [a-z-]+){0,2}|((our|my) (family|household)|(sellers?|owners?|homeowners?|(original|previous|former|first) (owners?|homeowners?|landlords?|landlady|landladies))) (celebrates|celebrated|observes|observed|keeps|kept|marks|marked)|(sellers?|owners?|homeowners?|landlords?|landlady)\b[^.;!?]{0,80} ((for|with|of|by|and) (their|her|his)|now that (the|their|her|his)))$",
    )
    .is_some_and(|owners| owners.is_match(before))
}

/// Where `text` tells the owners' or the writer's own household story in a phrase holding a class
/// word: "as a single dad, I loved ...", "now the kids are grown", "after 30 years and five
/// grandchildren", "we held every Passover seder around this table". A class word inside one
/// says who lived there, not who is wanted, unless the text also states a wish or asks for the
/// same.
fn tells_its_own_story(text: &str, range: std::ops::Range<usize>) -> bool {
    static STORY: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(story) = regex_once(
        &STORY,
        concat!(
            r"(?i)\bas (a|an) ((single|working|stay-at-home|new|young|retired|divorced|widowed) )?(dad|mom|mum|father|mother|parent|grandparent|grandmother|grandfather|widow|widower|retiree)s?,? (i|we)\b",
            r"|\b(now|since) (that )?(the|our|my) (kids|children|boys|girls|grandkids|grandchildren|sons|daughters) (are|have) (all )?(grown( up)?|moved out|left home|flown the nest|gone)",
            r"|\b(after|over) ([a-z0-9-]+ )?years( here| in this (house|home))?,? (and|with) (our |the )?([a-z0-9-]+ )?(kids|children|grandchildren|grandkids|sons|daughters)\b",
            r"|\b(we|i) (always |once |proudly )?(held|hosted|celebrated|observed|marked) (every |each |all |our |many |the |a )?([a-z'\u{2019}]+ ){0,2}(passover|seders?|christmas|easter|hanukkah|chanukah|diwali|eid|ramadan|iftars?|shabbat|sabbath|rosh hashanah|yom kippur|sukkot|kwanzaa|lunar new year)\b",
        ),
    ) else {
        return false;
    };
    let told = story.find_iter(text).any(|found| found.start() <= range.start && range.end <= found.end());
    told && !states_a_wish(text) && !asks_for_the_same(text)
}

/// Whether the (lower-case) text before a class word makes it the writer's description of
/// themselves: "I'm a gay man, 34", "I'm a Muslim woman in my 30s". It says who the writer is;
/// a wish stated beside it is a preference only when it asks for the same ([`asks_for_the_same`]).
fn describes_the_writer(before: &str) -> bool {
    static WRITER: OnceLock<Option<Regex>> = OnceLock::new();
    regex_once(&WRITER, r"(^|[^a-z])(i'm|i\u{2019}m|i am) (a|an)( [a-z0-9-]+,?){0,2}$")
        .is_some_and(|writer| writer.is_match(before))
}

/// Whether the class word at `range` of `text` is part of the words that open it (after at most
/// a label, "Roommate wanted:") to introduce its writer: a word and a word for a person, then
/// what the person does ("Gay guy who owns a two-bed condo, looking for a male roommate"). It
/// says who writes, as "I'm a ..." does ([`describes_the_writer`]).
fn opens_as_the_writer(text: &str, range: std::ops::Range<usize>) -> bool {
    static INTRODUCTION: OnceLock<Option<Regex>> = OnceLock::new();
    regex_once(
        &INTRODUCTION,
        r"(?i)^(?:[^.!?;:]{0,40}:\s*)?(?P<writer>[\w'-]+\s+(guy|gal|man|woman|girl|dude|lady|fellow|professional|student|couple))\b,?\s+(who|here|looking|seeking|renting|subletting|offering|with (a|an|my) (spare|extra|room|two|three|2|3))\b",
    )
    .and_then(|introduction| introduction.captures(text))
    .and_then(|found| found.name("writer"))
    .is_some_and(|writer| writer.start() <= range.start && range.end <= writer.end())
}

/// Whether `text` asks for people like the writer ("someone like me", "who shares my faith", "a
/// fellow ..."): then the writer's description is the ground of a preference.
fn asks_for_the_same(text: &str) -> bool {
    static SAME: OnceLock<Option<Regex>> = OnceLock::new();
    static SHARED_ROOMS: OnceLock<Option<Regex>> = OnceLock::new();
    // "Roommate wanted to share my apartment", "to share it with me": the rooms shared, not
    // who the writer is.
    let rooms = regex_once(
        &SHARED_ROOMS,
        r"(?i)\b(shares?|sharing|shared) ((my|our|the|a|this) ((two|three|2|3)[- ]?(bed(room)?|br) |spare |big |cozy |sunny )?(apartment|home|house|flat|place|room|kitchen|bathroom|bath|living room|space|condo|unit|\d ?br)|it with (me|us))\b",
    );
    let rest = rooms.map_or(std::borrow::Cow::Borrowed(text), |rooms| rooms.replace_all(text, " "));
    regex_once(&SAME, r"(?i)\b(like me|like myself|like us|same|shares?|sharing|fellow|as well|too|also)\b")
        .is_some_and(|same| same.is_match(&rest))
}

/// Whether `statement` lets assistance animals in without a charge or a condition ("Service
/// animals and emotional support animals are allowed even in our no-pet buildings"): what the law
/// asks, not a preference. A charge, a refusal or an "only" anywhere in it is left to be read; a
/// charge waived ("there's no pet deposit for assistance animals", "sin costo adicional") is
/// none. Read in English and Spanish.
pub(super) fn lets_assistance_animals_in(statement: &str) -> bool {
    static LET_IN: OnceLock<Option<Regex>> = OnceLock::new();
    static CONDITION: OnceLock<Option<Regex>> = OnceLock::new();
    static WAIVED: OnceLock<Option<Regex>> = OnceLock::new();
    let let_in = regex_once(
        &LET_IN,
        r"(?i)\b(service|assistance|support|emotional[- ]support|guide|therapy) (animals?|dogs?)\b[^.;!?]{0,60}\b(are|is) (always |also )?(allowed|permitted|welcome|welcomed|accepted)\b|\b(se aceptan|se admiten|se permiten|aceptamos|admitimos|permitimos|bienvenidos) (los )?(animales|perros) de (servicio|asistencia|apoyo emocional)\b",
    );
    let condition = regex_once(
        &CONDITION,
        r"(?i)\b(not|never|only|unless|deposits?|fees?|rent|charges?|surcharges?|extra|additional|but|no se|solo|sólo|solamente|excepto|pero|dep[oó]sitos?|cargos?|costos?|tarifas?|cuotas?|adicional(es)?)\b|n't\b|n\u{2019}t\b",
    );
    let waived = regex_once(
        &WAIVED,
        r"(?i)\b(there's |there is |with |and )?no (pet |extra |additional |animal )?(deposits?|fees?|charges?|surcharges?|pet rent)\b|\bsin (ning[uú]n )?(costo|cargo|dep[oó]sito|tarifa|cuota)( adicional| extra)?\b",
    );
    let conditions = waived.map_or(std::borrow::Cow::Borrowed(statement), |waived| waived.replace_all(statement, " "));
    let_in.is_some_and(|r| r.is_match(statement)) && condition.is_some_and(|r| !r.is_match(&conditions))
}

/// Whether `statement` only asks that whoever signs the lease be of legal age ("Se requiere una
/// persona mayor de edad para firmar el contrato", "The lease must be signed by an applicant of
/// legal age"): contract capacity, which the law allows, not an age or any other preference. A
/// statement that also limits who lives there ("only", "no children") is left to be read.
pub(super) fn asks_a_signer_of_legal_age(statement: &str) -> bool {
    static LEGAL_AGE: OnceLock<Option<Regex>> = OnceLock::new();
    static SIGNING: OnceLock<Option<Regex>> = OnceLock::new();
    static LIMIT: OnceLock<Option<Regex>> = OnceLock::new();
    let legal_age = regex_once(
        &LEGAL_AGE,
        r"(?i)\b(mayor(es)? de edad|of legal age|legal adults?|age of majority|majeur(e|es|s)?|vollj\u{e4}hrig\w*|maggiorenni|maggiorenne|maior(es)? de idade)\b",
    );
    let signing = regex_once(
        &SIGNING,
        r"(?i)\b(firm\w*|contrato|arrendamiento|sign\w*|lease|contract|co-?signers?|guarantors?|bail|unterschreib\w*|mietvertrag|firmare|contratto|assinar)\b",
    );
    let limit = regex_once(
        &LIMIT,
        r"(?i)\b(only|solo|s\u{f3}lo|solamente|no|sin|nur|kein\w*|seulement|pas|apenas|children|kids|ni\u{f1}os|hijos|menores|residents?|occupants?|residentes|ocupantes|vivir|live)\b",
    );
    legal_age.is_some_and(|r| r.is_match(statement))
        && signing.is_some_and(|r| r.is_match(statement))
        && limit.is_some_and(|r| !r.is_match(statement))
}

/// Whether `text` says what someone wants or allows ("only", "preferred", "would like"): a
/// description of the owners in it may be the ground of a preference ("Per the sellers, a
/// Christian family only").
fn states_a_wish(text: &str) -> bool {
    static WISH: OnceLock<Option<Regex>> = OnceLock::new();
    regex_once(
        &WISH,
        r"(?i)\b(only|prefer|prefers|preferred|preference|wants?|wanted|would like|seeks?|seeking|looking for|ideal for|perfect for|suits?|suited|welcome|must|no)\b",
    )
    .is_some_and(|wish| wish.is_match(text))
}

/// Whether `word` names a race, an origin or a faith ("Korean", "Baptist").
fn names_a_class(word: &str) -> bool {
    static CLASS: OnceLock<Option<Regex>> = OnceLock::new();
    let class = CLASS.get_or_init(|| Regex::new(&format!("(?i)^(?:{})$", CLASS_WORDS)).ok());
    let word = word.trim_end_matches([',', '\'', '\u{2019}']).trim_end_matches("'s");
    class.as_ref().is_none_or(|class| class.is_match(word))
}

/// Words that end the proper name of an institution or a place ("Islamic Center", "Jewish
/// Community Center", "Quaker Hill").
const INSTITUTIONS: &[&str] = &[
    "center",
    "centre",
    "hospital",
    "museum",
    "school",
    "academy",
    "college",
    "university",
    "society",
    "association",
    "club",
    "library",
    "institute",
    "council",
    "festival",
    "cemetery",
    "chamber",
    "foundation",
    "church",
    "cathedral",
    "chapel",
    "temple",
    "synagogue",
    "mosque",
    "parish",
    "abbey",
    "monastery",
    // Places named after a word of a class ("Gay Street", "Lady Bird Lake", "Mormon Row").
    "street",
    "avenue",
    "road",
    "lane",
    "drive",
    "boulevard",
    "row",
    "county",
    "lake",
    "river",
    "creek",
    "hill",
    "hills",
    "gulch",
    "bay",
    "island",
    "valley",
    "park",
    "square",
    "bar",
    "heights",
    "point",
];

/// Words that join the parts of a proper name ("Boys and Girls Club", "Church of St. Paul").
const NAME_JOINERS: &[&str] = &["and", "&", "of", "for", "the"];

/// Whether `rest` starts with a capitalised name (joined by "and", "of" ..., four words at most)
/// that ends in an institution.
fn names_an_institution(rest: &str) -> bool {
    let mut words = rest.split_whitespace().take(4).peekable();
    let starts_a_name = |w: &&str| is_capitalised(w) || NAME_JOINERS.contains(w);
    if !words.peek().is_some_and(starts_a_name) {
        return false;
    }
    words.take_while(starts_a_name).any(|w| {
        // "the Jewish Community Center's gym": the name ends in a possessive.
        let w = w.trim_end_matches([',', ';', ':', '.', ')']).to_lowercase();
        let w = w.trim_end_matches("'s").trim_end_matches("\u{2019}s");
        INSTITUTIONS.contains(&w)
    })
}

/// Words after which a phrase has ended ("another Korean who ...", "a Muslim and ...").
const PHRASE_ENDERS: &[&str] = &[
    "and", "or", "who", "that", "with", "like", "as", "to", "from", "in", "on", "at", "for", "but", "is", "are",
    "would", "will", "only", "please",
];

/// Whether a phrase ends where `rest` starts: punctuation, the end of the text, or a word that
/// begins a new phrase.
fn ends_a_phrase(rest: &str) -> bool {
    let rest = rest.trim_start();
    rest.is_empty()
        || rest.starts_with([',', '.', ';', ':', '!', '?', ')', '\u{2014}', '-'])
        || rest.split_whitespace().next().is_some_and(|w| PHRASE_ENDERS.contains(&w.to_lowercase().as_str()))
}

/// Whether the match at `range` starts inside one of `phrases` as `text` writes it (any case).
fn within_an_ordinary_phrase(text: &str, range: std::ops::Range<usize>, phrases: &[&str]) -> bool {
    if phrases.is_empty() {
        return false;
    }
    let lower = text.to_lowercase();
    // Lower-casing keeps byte offsets for the ASCII the phrases are written in; a text whose
    // length changes is read as having none of them.
    lower.len() == text.len()
        && phrases.iter().any(|phrase| {
            lower.match_indices(phrase).any(|(at, found)| at <= range.start && range.start < at + found.len())
        })
}

/// Whether the statement holding `range` says something lawful that makes `rule`'s match
/// ordinary. A place of worship is a landmark, not a draw, where places of several faiths are
/// named together ("close to churches, synagogues and mosques"); a sex is named lawfully in a
/// text that `shares_home`.
fn lawful_in_context(text: &str, range: std::ops::Range<usize>, rule: &Rule, shares_home: bool) -> bool {
    let statement = text[statement_around(text, range.clone())].to_lowercase();
    // "Walking distance to the Hindu temple, two churches and the library": a faith's name on one
    // of several faiths' places, or a place named in directions, is as much a landmark as the rest.
    let last_matched = text[range.clone()].split_whitespace().last().unwrap_or("");
    let next = text[range.end..].split_whitespace().next().unwrap_or("");
    let about_a_place = rule.landmark
        || (rule.category == Category::Religion
            && (names_a_place_of_worship(last_matched) || names_a_place_of_worship(next)));
    if about_a_place && faiths_of_places_named(&statement) > 1 {
        return true;
    }
    // "Female preferred", "female roommate preferred", "women only": the sex sought, told by the
    // words before a preference.
    let before = &text[..range.start];
    let sex_named = if rule.category == Category::Sex && names_a_sex(&text[range.clone()]) {
        only_plain_words_before(before)
    } else {
        let sought = sought_before(before);
        rule.category == Category::Steering
            && names_a_sex(sought)
            && only_plain_words_before(before.trim_end().strip_suffix(sought).unwrap_or(before))
    };
    if sex_named && shares_home {
        return true;
    }
    let lawful = rule.lawful_context;
    if lawful.words.is_empty() {
        return false;
    }
    let sentence = if lawful.whole_statement { statement } else { text[sentence_around(text, range)].to_lowercase() };
    lawful.words.iter().any(|context| says_unrefused(&sentence, context))
}

/// Whether lower-cased `sentence` says `words` at the start of a word and does not refuse them
/// ("won't accept", "it is not a 55+ community"). Chinese, Japanese and Korean put no space
/// between words: any place starts one.
fn says_unrefused(sentence: &str, words: &str) -> bool {
    sentence.match_indices(words).any(|(at, _)| {
        let before = &sentence[..at];
        let word_start = !before.ends_with(|c: char| c.is_alphanumeric()) || words.starts_with(is_unspaced_script);
        // Right before it, or before its article: "it is not a 55+ community".
        let negation = |w: &str| {
            matches!(
                w,
                "no" | "not" | "never" | "won't" | "don't" | "doesn't" | "can't" | "cannot" | "isn't" | "aren't"
                    // Tagalog: "hindi pwede ang may anak", those with children are not fine.
                    | "hindi"
                    // Polish: "nie jest przystosowane", not adapted.
                    | "nie"
            )
        };
        // "not a registered 55+ community": a qualifier between the article and the words.
        let mut words_before = before.split_whitespace().rev().skip_while(|w| {
            matches!(
                *w,
                "registered" | "licensed" | "certified" | "designated" | "official" | "legal" | "true" | "formal"
            )
        });
        // "nothing is available", "none are accepted": refused through the verb.
        let refused = match words_before.next() {
            Some("a" | "an" | "the") => words_before.next().is_some_and(negation),
            Some("is" | "are" | "was" | "were" | "be" | "jest" | "są") => {
                words_before.next().is_some_and(|w| negation(w) || matches!(w, "nothing" | "none" | "nobody"))
            }
            last => last.is_some_and(negation),
        };
        word_start && !refused
    })
}

/// Words that name a sex and nothing else.
const SEXES: &[&str] = &[
    "female",
    "females",
    "male",
    "males",
    "woman",
    "women",
    "man",
    "men",
    "girl",
    "girls",
    "guy",
    "guys",
    "gal",
    "gals",
    "lady",
    "ladies",
    "gentleman",
    "gentlemen",
];

/// Who shares a home, rents or offers it, named after a sex ("female roommate", "male homeowner").
const SHARERS: &[&str] = &[
    "roommate",
    "roommates",
    "housemate",
    "housemates",
    "tenant",
    "tenants",
    "renter",
    "renters",
    "homeowner",
    "owner",
];

/// The words right before a preference that may name whom it seeks: the last word, or the last
/// two when the last names a sharer ("female roommate preferred").
fn sought_before(before: &str) -> &str {
    let word_start =
        |text: &str| text.char_indices().rfind(|(_, c)| c.is_whitespace()).map_or(0, |(i, c)| i + c.len_utf8());
    let trimmed = before.trim_end();
    let last_start = word_start(trimmed);
    if !SHARERS.contains(&trimmed[last_start..].to_lowercase().as_str()) {
        return &trimmed[last_start..];
    }
    &trimmed[word_start(trimmed[..last_start].trim_end())..]
}

/// Whether `words` name only a sex ("female", "men", "a female roommate", "women only"), not an
/// orientation or gender identity.
fn names_a_sex(words: &str) -> bool {
    let words: Vec<String> = words.split_whitespace().map(str::to_lowercase).collect();
    words.iter().any(|word| SEXES.contains(&word.as_str()))
        && words.iter().all(|word| SEXES.contains(&word.as_str()) || SHARERS.contains(&word.as_str()) || word == "only")
}

/// Whether the word right before a sex word (past a bracket that opens on it), in its clause
/// (back to a colon, comma or the start),
/// only seeks a roommate ("Roommate wanted: female", "Seeking a male", "looking for a female"):
/// no other class rides along with the sex named ("desi girl preferred", "healthy female
/// preferred").
fn only_plain_words_before(before: &str) -> bool {
    const PLAIN: &[&str] = &[
        "a",
        "an",
        "one",
        "seeking",
        "seeks",
        "looking",
        "for",
        "wanted",
        "needed",
        "roommate",
        "housemate",
        "prefer",
        "prefers",
        "i",
        "we",
        "am",
        "are",
        "is",
        "my",
        "our",
        "new",
        "clean",
        "quiet",
        "tidy",
        "friendly",
        "responsible",
        "working",
        "professional",
        "student",
        "nonsmoking",
        "non-smoking",
        "only",
        "another",
        "other",
    ];
    // A bracket does not hide the word before it: "Housemate wanted (female)" names the sex after
    // a plain word, "Healthy (female) housemate" after another class.
    let before = before.trim_end().trim_end_matches('(');
    let clause = before.rsplit([':', ',', ';', '.', '!', '?', '\u{2014}', '-']).next().unwrap_or(before);
    clause.split_whitespace().next_back().is_none_or(|word| {
        let word = word.to_lowercase();
        PLAIN.contains(&word.as_str()) || SEXES.contains(&word.as_str())
    })
}

/// Whether a sex preference the sentence model reads in `statement` is lawful: its text
/// `shares_home` (seeks someone to share the writer's home) and `statement` names the sex
/// sought outright ("female seeking female"), each sex word after a plain one, and no
/// orientation or gender identity outside the words that introduce the writer. A preference
/// hinted at instead ("a sorority-style house") is still dropped: the check cannot tell what else
/// it hints at.
pub(super) fn seeks_a_roommate_of_one_sex(statement: &str, shares_home: bool) -> bool {
    const IDENTITIES: &[&str] = &[
        "gay",
        "gays",
        "lesbian",
        "lesbians",
        "queer",
        "trans",
        "transgender",
        "bi",
        "bisexual",
        "straight",
        "lgbt",
        "lgbtq",
        "nonbinary",
        "non-binary",
        "cis",
        "cisgender",
        "homosexual",
        "heterosexual",
    ];
    static WORDS: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(words) = regex_once(&WORDS, r"[\w-]+") else { return false };
    let mut sex_named = false;
    for word in words.find_iter(statement) {
        // Who the writer is ("Gay guy who owns a condo, looking for a male roommate") is no
        // part of whom they seek.
        if opens_as_the_writer(statement, word.range()) {
            continue;
        }
        let lower = word.as_str().to_lowercase();
        if IDENTITIES.contains(&lower.as_str()) {
            return false;
        }
        if SEXES.contains(&lower.as_str()) {
            // As for the rules: no other class rides along ("healthy female preferred").
            if !only_plain_words_before(&statement[..word.start()]) {
                return false;
            }
            sex_named = true;
        }
    }
    sex_named && shares_home
}

/// Whether `text` seeks someone to share the writer's own home: HUD's advertising guidance lets
/// such an ad name the sex of the roommate sought ("Roommate wanted: female to share my 2BR"),
/// since the living areas are shared. A text that speaks of units, a building or a complex is a
/// landlord's, whatever it says of roommates ("Our 12-unit building: female preferred").
pub(super) fn shares_living_quarters(text: &str) -> bool {
    static SEEKS: OnceLock<Option<Regex>> = OnceLock::new();
    static MANY_UNITS: OnceLock<Option<Regex>> = OnceLock::new();
    static LIVES_ELSEWHERE: OnceLock<Option<Regex>> = OnceLock::new();
    static OWN_HOME: OnceLock<Option<Regex>> = OnceLock::new();
    let seeks = regex_once(
        &SEEKS,
        r"(?i)\b((room ?mate|housemate|flatmate)s? (wanted|needed)|(seeking|seek|looking for|need|needs|want|wants) an? ((new|female|male|woman|man|girl|guy|clean|quiet|responsible) )*(room ?mate|housemate|flatmate)|(room ?mate|housemate|flatmate) (for|in|to share) my|share my|rooms? (to share |for rent |to let |available )?in my|(live|living|share) with me|live-in (landlady|landlord|owner|homeowner|host)|rooms? in (her|his|my|our) (flat|home|house|apartment)|(sublet|subletting|subleasing|renting out|rent out|letting) my (spare |extra |second |back |front |box |small )?room|(we'd|we would|we'll|we will) (be )?shar(e|ing) (the|a|my|our) (only )?(bathroom|kitchen|flat|apartment|house|home|place))\b",
    );
    let many_units =
        regex_once(&MANY_UNITS, r"(?i)\b(\d+[- ]units?|units|building|complex|fourplex|triplex|(i|we) (own|manage))\b");
    // "Room in my rental house (I don't live there)": the writer's, not their home.
    let lives_elsewhere = regex_once(
        &LIVES_ELSEWHERE,
        r"(?i)\b(i|we) (don't|do not|don’t|dont|no longer) (live|reside) (there|in it|in the (house|home|unit|property|flat|apartment)|on site|onsite|on the property)\b|\b(the )?(landlord|landlady|owner|homeowner) (doesn't|does not|doesn’t|doesnt|no longer) (live|reside)s? (here|there|in it|in the (house|home|unit|property|flat|apartment)|on site|onsite|on the property)\b|\bnot (owner|landlord)[- ]occupied\b",
    );
    let (Some(seeks), Some(many_units), Some(lives_elsewhere)) = (seeks, many_units, lives_elsewhere) else {
        return false;
    };
    // "I own the house and live in it", "the spare room in the house I own": the writer's own
    // home, not one of a landlord's buildings.
    let lives_here = writer_lives_there(text);
    let rest = lives_here.as_ref().map_or(std::borrow::Cow::Borrowed(text), |found| {
        std::borrow::Cow::Owned(format!("{} {}", &text[..found.start], &text[found.end..]))
    });
    let own_home = regex_once(&OWN_HOME, &format!(r"(?i)\b(the|my|our) ({HOMES}|place) (that |which )?(i|we) own\b"));
    let rest = own_home.map_or(rest.clone(), |own_home| own_home.replace_all(&rest, " "));
    (seeks.is_match(text) || (lives_here.is_some() && lets_a_room_of_it(text)))
        && !many_units.is_match(&rest)
        && !lives_elsewhere.is_match(text)
}

/// The words for a home a writer may own and live in.
const HOMES: &str = "home|house|flat|apartment|condo|townhouse|townhome|bungalow|cottage|loft";

/// Where `text` says the writer (or the owner) lives in the home offered: "I live here", "the
/// owner lives in the home", "I own the house and live in it", "owner-occupied".
fn writer_lives_there(text: &str) -> Option<std::ops::Range<usize>> {
    static LIVES_HERE: OnceLock<Option<Regex>> = OnceLock::new();
    regex_once(
        &LIVES_HERE,
        &format!(r"(?i)\b((i|we) (also )?(live|reside) (here|on site|onsite|in (it|the (unit|{HOMES})))|(i|we) own (the|this|my|our) ({HOMES}) and (live|reside) (in it|here|there)|(i|we) own and (live|reside) in (the|this|my|our) (\w+ )?({HOMES})|(in|of) (my|our) own ({HOMES})|(the )?({HOMES}) (i|we) (own and )?(live|reside) in|living in (the|my|our) (own )?({HOMES}) (i|we) own|(i'm|i am|we're|we are) [a-z ]{{0,30}}living here|(the )?(owner|landlord|landlady|homeowner) (lives|resides) (in|at) (the|this) (unit|property|{HOMES})|owner[- ]occupied)\b"),
    )?
    .find(text)
    .map(|found| found.range())
}

/// Whether `text` lets a room of the home, or shares its rooms ("renting out one bedroom",
/// "share the kitchen", "the bathroom is shared").
fn lets_a_room_of_it(text: &str) -> bool {
    static LETS: OnceLock<Option<Regex>> = OnceLock::new();
    regex_once(
        &LETS,
        r"(?i)\b((renting|rent|letting|let) (out )?(a|one|the|my|our|a spare|the spare|an extra|the extra|a private) ((guest|spare|extra|back|front|second|furnished|private) )?(bed)?room|(housemate|roommate|flatmate) for the (second|spare|extra|other|guest) (bed)?room|shar(e|es|ed|ing) (the|a|my|our) (kitchen|bathroom|bath|living room|lounge|home|house|flat|apartment)|(kitchen|bathroom|bath|living room) (is|are) shared)\b",
    )
    .is_some_and(|lets| lets.is_match(text))
}

/// Whether `c` belongs to a script written without spaces between words (Chinese, Japanese),
/// or whose particles join the word before (Korean).
fn is_unspaced_script(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{30FF}' | '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}' | '\u{AC00}'..='\u{D7AF}')
}

/// Places of worship by the faith they serve; a temple may be any of several, and counts as one.
const PLACES_OF_WORSHIP: &[&[&str]] = &[
    &["church", "churches", "chapel", "chapels", "cathedral", "cathedrals"],
    &["synagogue", "synagogues", "shul", "shuls"],
    &["mosque", "mosques", "masjid"],
    &["temple", "temples"],
    &["gurdwara", "gurdwaras"],
    &["mandir", "mandirs"],
];

/// How many faiths' places of worship a (lower-case) sentence names.
fn faiths_of_places_named(sentence: &str) -> usize {
    let words: Vec<&str> = sentence.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    PLACES_OF_WORSHIP.iter().filter(|kind| words.iter().any(|w| kind.contains(w))).count()
}

/// Whether `word` (any case, punctuation around it ignored) names a place of worship.
pub(super) fn names_a_place_of_worship(word: &str) -> bool {
    let word = word.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
    PLACES_OF_WORSHIP.iter().any(|kind| kind.contains(&word.as_str()))
}

/// Whether the statement holding `range` declares equal opportunity ("We don't discriminate
/// based on race, color, religion ...", "families and individuals of every background are
/// welcome", "we don't ask about your plans for a family"): naming the classes to say that none
/// matters is not a preference, unless the statement turns ("... but", "preferred", "only").
fn states_equal_opportunity(text: &str, range: std::ops::Range<usize>) -> bool {
    static DECLARES: OnceLock<Option<Regex>> = OnceLock::new();
    let declares = regex_once(
        &DECLARES,
        &format!(
            r"{FAIR_HOUSING_DECLARED}|(?i)\b((on|under|by) the same (terms|rules|basis) as (everyone|everybody|all|any)|{NOT_ASKING}( [a-z]+){{0,2}} (about|into|for|regarding)|(all|any) (lawful|legal|verifiable) (sources|forms) of income|income from (all|any) (lawful|legal|verifiable) sources|(everyone|everybody|anyone|all)(['’]s| is| are)? welcome|(we )?welcomes? (everyone|everybody|all)\s*([.,!;]|$)|of (every|any|all) (backgrounds?|faiths?|ages|races|origins)\b.*\bwelcome|welcomes? (applicants|tenants|buyers|renters|residents|people|households|everyone) of (every|any|all) (races?|colou?rs?|religions?|faiths?|backgrounds?|national origins?|sex|genders?|ages?)\b)"
        ),
    );
    let statement = &text[statement_around(text, range)];
    declares.is_some_and(|declares| declares.is_match(statement)) && !turns(statement)
}

/// Not asking about a class, said by the writer, the landlord or their staff ("we will never
/// ask", "landlord does not ask") or to the staff ("do not ask applicants"); not a reader told
/// "don't ask for a reserved spot because of a disability". A macro, so that [`concat!`] can
/// read it too.
macro_rules! not_asking {
    () => {
        r"((we|i|they|(the |our )?(landlords?|landlady|owners?|managers?|management|office|staff|agents?))( will| would)? (do not|don't|does not|doesn't|never|will not|won't) (ask|inquire|enquire)|(do not|don't|never) (ask|inquire|enquire) (applicants|tenants|anyone|callers|prospects|buyers|renters|people))"
    };
}
const NOT_ASKING: &str = not_asking!();

/// Equal opportunity declared in the law's own terms, in the languages listings are written in:
/// fair housing, equal opportunity, no discrimination, regardless of the classes, every
/// qualified applicant welcome ("공정주택법을 준수하며 자격을 갖춘 모든 지원자를 환영합니다"),
/// everyone welcome ("Alle Bewerber sind willkommen", "Hoan nghênh tất cả mọi người", "Nou
/// aksepte tout moun ki kalifye").
const FAIR_HOUSING_DECLARED: &str = concat!(
    r"(?i)\b((do not|don't|does not|doesn't|never|will not|won't) discriminate|(no|never an?|not an?) (applicants?|one|tenants?|buyers?|renters?|households?|person|family|families) (will|shall|would|is|are|gets?|can) (ever )?(be )?(refused|rejected|turned away|denied|treated differently|excluded) (because of|based on|on the basis of|for)|(without regard (to|for)|regardless of|irrespective of) (race|colou?r|religion|sex|gender|national origin|familial status|disability|age|immigration status|citizenship|nationality|ancestry|ethnicity)|equal (housing )?opportunity|fair housing|",
    not_asking!(),
    r" (about|into|regarding|whether|if)( (you|your|applicants'?|tenants'?|anyone's|have|any))* (children|kids|family|families|familial status|age|religion|faith|national origin|citizenship|immigration status|disabilit(y|ies)|medical (conditions|history)|marital status|sexual orientation|gender))\b",
    r"|공정\s?주택|차별하지 않|모든 (자격을 갖춘 )?(지원자|신청자)|모든 분(을|들을)? 환영|公平住房|平等机会|平等機會|不歧视|不歧視|所有(合格的?)?申请人|欢迎所有|歡迎所有|(不论|不論|无论|無論)(种族|種族|宗教|国籍|國籍|性别|性別|肤色|膚色|残疾|殘疾|家庭)",
    r"|nhà ở công bằng|không phân biệt đối xử|(hoan nghênh|chào đón) tất cả|bất kể (chủng tộc|tôn giáo|quốc tịch|giới tính|màu da|khuyết tật|tình trạng gia đình)",
    r"|vivienda justa|igualdad de oportunidades|sin discriminaci[oó]n|no discriminamos|sin importar (la |su )?(raza|religi[oó]n|origen|sexo|discapacidad)|independientemente de (la |su )?(raza|religi[oó]n|origen|sexo)|sin distinci[oó]n de (raza|religi[oó]n|origen|sexo)|todos son bienvenidos",
    r"|igualdade de oportunidades|sem distinção de (raça|religião|origem|sexo)|todos são bem-vindos",
    r"|égalité des chances|logement équitable|sans discrimination|sans distinction de (race|religion|origine|sexe)|ouvert à tous|bienvenue à tous",
    r"|chancengleich|ohne diskriminierung|unabhängig von (herkunft|religion|geschlecht|hautfarbe|nationalität|behinderung|familienstand)|alle ((bewerber(innen)?|interessenten|mieter(innen)?) )?sind (herzlich )?willkommen",
    r"|(bez względu na|niezależnie od) (rasę|religię|pochodzenie|płeć|niepełnosprawność|narodowość|wyznanie|kolor skóry)|wszyscy (są )?mile widziani|независимо от (расы|религии|национальности|пола|происхождения|инвалидности)|рады всем|без дискриминации",
    r"|pantay na pabahay|walang diskriminasyon|lahat ay malugod na tinatanggap|(بغض|بصرف) النظر عن (العرق|الدين|الجنس|الأصل|الإعاقة|اللون)|نرحب بجميع|دون تمييز",
    r"|(nou )?aksepte tout moun|tout moun (byenveni|akeyi)|san diskriminasyon|kèlkeswa (ras|relijyon|orijin|sèks|koulè)",
    r"|dhammaan (codsadayaasha|dadka)( waa)?( la)?( soo)? (dhaweynayaa|dhawaynayaa|soo dhawaynayaa)|takoor la'aan",
    r"|تمام (درخواست دہندگان|امیدواروں|لوگوں) (کا|کو) خیرمقدم|سب کا خیرمقدم|بلا امتیاز|बिना भेदभाव|सभी (आवेदकों|लोगों) का स्वागत",
);

/// Whether `statement` declares equal opportunity in the law's own terms (see
/// [`FAIR_HOUSING_DECLARED`]) and does not turn: what the sentence model may read as naming a
/// class is then the declaration.
pub(super) fn declares_fair_housing(statement: &str) -> bool {
    static DECLARES: OnceLock<Option<Regex>> = OnceLock::new();
    regex_once(&DECLARES, FAIR_HOUSING_DECLARED).is_some_and(|declares| declares.is_match(statement))
        && !turns(statement)
}

/// Whether `statement` turns after a declaration ("... but", "preferred", "only"), in English
/// or the other languages [`FAIR_HOUSING_DECLARED`] reads.
fn turns(statement: &str) -> bool {
    static TURNS: OnceLock<Option<Regex>> = OnceLock::new();
    static LAWFUL_LIMIT: OnceLock<Option<Regex>> = OnceLock::new();
    // "We don't ask about children; the only limit is the occupancy code": a lawful limit named
    // as the only one narrows nothing the declaration opened.
    let limit = regex_once(
        &LAWFUL_LIMIT,
        r"(?i)\bthe only (limits?|requirements?|rules?|restrictions?|conditions?|criteria|criterion|cap|caps) (is|are) (the |a |an |our |your )?(city's |county's |state's |local |legal |lawful )?(occupancy|income|credit|background|rental history|screening|lease)\b",
    );
    let statement = limit.map_or(std::borrow::Cow::Borrowed(statement), |limit| limit.replace_all(statement, " "));
    regex_once(
        &TURNS,
        r"(?i)\b(but|however|except|prefer|preferred|preference|only|though|although|unless|if|as long as|provided|pero|sin embargo|solo|sólo|excepto|salvo|menos|exceto|apenas|mais|seulement|sauf|aber|nur|außer|ausgenommen|nhưng|chỉ|trừ|ngoại trừ|oprócz|poza|tylko|ale|кроме|только|но|maliban|lamang|sèlman|kaliya|keliya)\b|하지만|그러나|만 |제외|但|只|除了|ما عدا|باستثناء|فقط|لكن|صرف|केवल|सिर्फ",
    )
    .is_some_and(|turns| turns.is_match(&statement))
}

/// Whether `statement` praises a neighbourhood's diversity ("I grew up in this neighborhood and
/// love its diversity"): the opposite of steering away from it, which the rules read ("away
/// from the diversity").
pub(super) fn praises_diversity(statement: &str) -> bool {
    static PRAISES: OnceLock<Option<Regex>> = OnceLock::new();
    static AVOIDS: OnceLock<Option<Regex>> = OnceLock::new();
    let praises = regex_once(
        &PRAISES,
        r"(?i)\b(love|loves|loved|enjoy|enjoys|celebrate|celebrates|embrace|embraces|proud of|rich in|known for|famous for|full of)( (its|the|our|their|all the|all its))? (diversity|diverse)\b",
    );
    let avoids = regex_once(
        &AVOIDS,
        r"(?i)\b(away from|escape|without|free of|free from|less|no|too much)( (the|all the|that|its))? (diversity|diverse)\b|\b(but|however|only|prefer|preferred|not|just|except)\b|n['’]t\b",
    );
    praises.is_some_and(|r| r.is_match(statement)) && avoids.is_some_and(|r| !r.is_match(statement))
}

/// Whether `statement` states an age rule ("Age verification for at least one occupant is
/// required") of a `text` that presents housing for older persons in the law's terms ("a 55+
/// community under HOPA") and does not deny it ("this is not a 55+ community"): the rule is then
/// the exemption's own. Only a statement about age itself: the sentence model may name age for
/// another preference in such a text ("Senior apartments notice: scooters are not allowed ...").
pub(super) fn states_older_persons_age_rule(text: &str, statement: &str) -> bool {
    static AGE_RULE: OnceLock<Option<Regex>> = OnceLock::new();
    let text = text.to_lowercase();
    OLDER_PERSONS_HOUSING.words.iter().any(|words| says_unrefused(&text, words))
        && regex_once(
            &AGE_RULE,
            r"(?i)\b(age|ages|aged|years? old|years of age|\d\d (and (older|over)|or older))\b|\b\d\d\+",
        )
        .is_some_and(|age| age.is_match(statement))
        && !turns(statement)
}

/// Whether `statement` states a smoking rule ("Không hút thuốc trong nhà": no smoking indoors),
/// in the languages listings are written in, and does not turn ("non-smokers preferred, only
/// ..."): the sentence model, which learnt few of them, may read one as naming a class. A class
/// named beside the rule is still the phrase rules' to find.
pub(super) fn states_a_smoking_rule(statement: &str) -> bool {
    static SMOKING: OnceLock<Option<Regex>> = OnceLock::new();
    regex_once(
        &SMOKING,
        r"(?i)\b(no smoking|non-?smoking|smoke-?free|không hút thuốc|cấm hút thuốc|nichtraucher\w*|rauchen (ist )?(verboten|nicht (gestattet|erlaubt))|no (se permite )?fumar|prohibido fumar|libre de humo|interdit de fumer|non-?fumeurs?|zakaz palenia|dla niepalących|курение запрещено|не курить|bawal (ang )?(manigarilyo|paninigarilyo)|proibido fumar|não fumantes?)\b|금연|흡연 금지|禁止吸烟|禁止吸煙|禁烟|禁煙|ممنوع التدخين|التدخين ممنوع",
    )
    .is_some_and(|smoking| smoking.is_match(statement))
        && !turns(statement)
}
