//! The Fair Housing check: listing text describes the property, not who should live there
//! (42 U.S.C. 3604(c); 24 CFR 100.75). A maintained phrase list, by protected category, finds
//! wording that states or implies a preference; each finding is rewritten to a neutral phrase, or,
//! where no neutral wording keeps the sense ("no children", "adults only"), its sentence is
//! dropped. Then any sentence that still names people by a protected class ("kids", "seniors",
//! "Jewish families", "ladies"), whatever the phrasing around it, is dropped: a rewrite never
//! leaves half a preference behind ("Perfect for gatherings with kids"). So is a sentence with
//! the shape of a preference whatever words fill it: people described by a class ("Black or
//! Hispanic applicants"), a refusal ("... need not apply", "X preferred") unless it is about
//! something lawful to screen on (smoking, pets, credit), neighbours described by their make-up.
//! Misspelt class words are read as the words they stand for, hashtags as the words they run
//! together ("#nokids"), and class words of the other languages US listings are written in drop
//! their sentence. A sentence model (`sentence_model`) reads each statement the rules pass and
//! drops one that states a preference in words no rule lists. A reader's question ("Q: Is it
//! good for kids? A: ...") is not the writer's statement: its answer is checked (`questions`).
//! Every change is reported.
//!
//! The list is deliberately specific: ordinary real-estate words ("family room", "single-family",
//! "walk-in closet", "master bedroom") are not findings. Whether "master" is rewritten to
//! "primary", as some MLSs require, is the deployment's choice ([`Policy`]).

mod hashtags;
mod languages;
mod matching;
mod phrases;
mod questions;
mod sentence_model;
mod spelling;
mod text;

use matching::{first_match, names_a_place_of_worship};
use phrases::Action;
use questions::{answer_stands_alone, Part};
use serde::{Deserialize, Serialize};
use text::{collapse_whitespace, fix_article, match_case, proper_name_after, statement_around, statements};

/// A protected category under the Fair Housing Act, plus steering language that signals who is
/// welcome without naming a class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Households with children.
    FamilialStatus,
    /// Age (outside a qualifying housing-for-older-persons community).
    Age,
    /// Religion.
    Religion,
    /// Disability (handicap).
    Disability,
    /// Race, colour or national origin.
    RaceOrNationalOrigin,
    /// Sex.
    Sex,
    /// Code words that signal who is welcome ("exclusive", "safe neighborhood").
    Steering,
    /// The deployment's own house style ("master" to "primary").
    HouseStyle,
}

/// One change made to a text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Finding {
    /// The protected category.
    pub category: Category,
    /// Where the text came from: `details.description`, `details.features[2]`, `captions.social`.
    pub field: String,
    /// The phrase as written.
    pub original: String,
    /// What replaced it; `null` when the sentence (or feature) holding it was dropped.
    pub replacement: Option<String>,
}

/// What the deployment configures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// Rewrite "master bedroom/bath/suite" to "primary ...".
    pub master_to_primary: bool,
    /// Check with the phrase rules alone, without the sentence model (for measuring the rules,
    /// and labelling the model's training corpus with them). Left out of stored jobs when off, so
    /// jobs stored before it existed read and write back unchanged.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rules_only: bool,
}

impl Policy {
    /// The phrase rules alone, with the default house style.
    pub const RULES_ONLY: Policy = Policy { master_to_primary: false, rules_only: true };

    /// This policy with the sentence model off.
    fn without_model(self) -> Policy {
        Policy { rules_only: true, ..self }
    }
}

/// Checks `text`; returns it rewritten and adds what changed to `findings`, naming `field`.
///
/// A misspelt class word ("childern") is read as the word it stands for; the finding then quotes
/// the corrected spelling. A hashtag that runs words together ("#nokids") is read as its words;
/// one that holds no finding is written back as it was. A text with no finding comes back as
/// written, typos and all, with its whitespace collapsed.
///
/// A question a reader asked ("Q: Is it good for kids? A: Three bedrooms and a fenced yard.") is
/// not the writer's statement: its answer is checked. An answer that takes its sense from the
/// question ("A: Sorry, no.") is checked with it, and the two go together if anything is found.
pub fn clean(text: &str, field: &str, policy: Policy, findings: &mut Vec<Finding>) -> String {
    // Patterns match words one space apart; the output's whitespace is collapsed anyway.
    let as_written = collapse_whitespace(text);
    let parts = questions::parts(&as_written);
    let shares_home = writer_shares_home(&parts);
    let kept: Vec<String> = parts
        .into_iter()
        .map(|part| {
            let Some(checked) = part.as_checked() else { return part.as_written().into_owned() };
            let found_before = findings.len();
            let cleaned = clean_read(&checked, shares_home, field, policy, findings);
            let Part::Answered { question, answer } = part else { return cleaned };
            let found = &mut findings[found_before..];
            if answer_stands_alone(question, answer) {
                // A question left without its answer would read as the writer's own, and an
                // answer a rewrite left leaning on its question ("A: Sorry, no.") says it again.
                if !cleaned.is_empty() && answer_stands_alone(question, &cleaned) {
                    return format!("{question} {cleaned}");
                }
            } else if found.iter().all(|f| f.category == Category::HouseStyle) {
                // The house style's rewrites ("master" to "primary") name no one.
                return cleaned;
            }
            // A rewrite would leave an answer to a question no longer asked: the pair goes.
            for finding in found {
                finding.replacement = None;
            }
            String::new()
        })
        .collect();
    collapse_whitespace(&kept.join(" "))
}

/// [`clean`] for text with no question and answer in it, its whitespace collapsed, from a text
/// that `shares_home` or not (see [`matching::first_match`]).
fn clean_read(as_written: &str, shares_home: bool, field: &str, policy: Policy, findings: &mut Vec<Finding>) -> String {
    let found_before = findings.len();
    let (mut text, tags) = as_read(as_written);
    if !policy.rules_only {
        drop_read_preferences(&mut text, shares_home, field, policy, findings);
    }
    // Each pass removes or neutralises one finding; replacements contain no listed phrase, so
    // this ends well within the bound (a text has fewer findings than words).
    let bound = text.split_whitespace().count() + 8;
    for _ in 0..bound {
        let Some((mut range, compiled)) = first_match(&text, shares_home, policy) else { break };
        let matched = text[range.clone()].to_string();
        if compiled.rule.takes_name {
            range.end += proper_name_after(&text[range.end..]);
        }
        let original = text[range.clone()].to_string();
        // "..., so Jewish buyers will feel right at home": with the class word rewritten, the
        // sentence still promises belonging to the people it had in mind, so it goes. The house
        // style's rewrites name no people ("the primary suite will make you feel at home").
        // "Christian neighborhood, church bells every Sunday": with the faith rewritten, the
        // place of worship beside it still says who is sought, so that sentence goes too (a
        // place's own rewrite, "St. Mary's Church" to "local landmarks", leaves none).
        let around = statement_around(&text, range.clone());
        let beside = [&text[around.start..range.start], &text[range.end..around.end]];
        let action = match compiled.rule.action {
            Action::Replace(_)
                if compiled.rule.category != Category::HouseStyle
                    && (promises_belonging(&text[around.clone()])
                        || (compiled.rule.category == Category::Religion
                            && beside
                                .iter()
                                .flat_map(|part| part.split_whitespace())
                                .any(names_a_place_of_worship))) =>
            {
                Action::DropSentence
            }
            action => action,
        };
        match action {
            Action::Replace(with) => {
                let clause_follows = text[range.end..].split_whitespace().next().is_some_and(|w| {
                    matches!(w.to_lowercase().as_str(), "who" | "that" | "whose" | "looking" | "seeking" | "wanting")
                });
                let with = compiled.rule.before_clause.filter(|_| clause_follows).unwrap_or(with);
                let replaced = collapse_whitespace(&compiled.regex.replace(&matched, with));
                let replaced = match_case(&original, &replaced, &text[..range.start]);
                // A rewrite inside a tag keeps it a tag: "#mancave" becomes "#bonusroom".
                if let Some((tag, as_written, joined)) = tags.rewritten_within(&text, &range, &replaced) {
                    findings.push(Finding {
                        category: compiled.rule.category,
                        field: field.to_string(),
                        original: as_written.to_string(),
                        replacement: Some(joined.clone()),
                    });
                    text.replace_range(tag, &joined);
                    continue;
                }
                let range = fix_article(&mut text, range, &replaced);
                findings.push(Finding {
                    category: compiled.rule.category,
                    field: field.to_string(),
                    original,
                    replacement: Some(replaced.clone()),
                });
                text.replace_range(range, &replaced);
            }
            Action::DropSentence => {
                // The clauses a semicolon joins go with it: what is left of "Set up for one
                // working person; not designed for families" still says whom it is for.
                let sentence = statement_around(&text, range);
                findings.push(Finding {
                    category: compiled.rule.category,
                    field: field.to_string(),
                    original,
                    replacement: None,
                });
                text.replace_range(sentence, "");
            }
        }
    }
    if !policy.rules_only {
        drop_rewrites_still_read(&mut text, shares_home, field, found_before, findings);
    }
    // The rewrites are the rules' own, so only the rules judge what is left.
    if !is_clean_read(&text, shares_home, policy.without_model()) {
        // Fail closed: a text that still reads as a preference is not printed at all.
        return String::new();
    }
    if findings.len() == found_before {
        return as_written.to_string();
    }
    // Findings quote the text as the client wrote it, without the spelled-out tags' markers.
    for finding in &mut findings[found_before..] {
        finding.original = tags.without_markers(&finding.original);
        finding.replacement = finding.replacement.as_deref().map(|r| tags.without_markers(r));
    }
    tags.without_markers(&collapse_whitespace(&tags.joined_back(&text)))
}

/// `text` (its whitespace collapsed) as the rules read it: hashtags spelled out, then misspelt
/// class words corrected, so a tag's words are corrected too; with the tags, to write them back.
fn as_read(text: &str) -> (String, hashtags::SpelledTags) {
    let (spelled, tags) = hashtags::spelled_out(text);
    (spelling::corrected(&spelled).into_owned(), tags)
}

/// Whether `statement` promises its readers that they will belong ("will feel right at home",
/// "fit right in").
fn promises_belonging(statement: &str) -> bool {
    static BELONGING: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    matching::regex_once(
        &BELONGING,
        r"(?i)\b(feel (right |so |completely |truly |very )?(at home|welcome|welcomed|comfortable|included)|fit (right )?in|among (their|your|his|her) own|(their|your) own kind)\b",
    )
        .is_some_and(|belonging| belonging.is_match(statement))
}

/// Whether `text` has no finding, its questions and answers read as [`clean`] reads them.
pub fn is_clean(text: &str, policy: Policy) -> bool {
    let text = collapse_whitespace(text);
    let parts = questions::parts(&text);
    let shares_home = writer_shares_home(&parts);
    parts.into_iter().all(|part| part.as_checked().is_none_or(|checked| is_clean_read(&checked, shares_home, policy)))
}

/// Whether the writer seeks someone to share their home ([`matching::shares_living_quarters`]),
/// read from the writer's words: the text without its readers' questions, its tags spelled out
/// ("#RoommateWanted").
fn writer_shares_home(parts: &[Part]) -> bool {
    let written: Vec<&str> = parts
        .iter()
        .map(|part| match *part {
            Part::Read(read) => read,
            Part::Answered { answer, .. } => answer,
        })
        .collect();
    matching::shares_living_quarters(&as_read(&written.join(" ")).0)
}

/// [`is_clean`] for text with no question and answer in it, from a text that `shares_home` or
/// not.
fn is_clean_read(text: &str, shares_home: bool, policy: Policy) -> bool {
    let (text, _) = as_read(text);
    first_match(&text, shares_home, policy).is_none()
        && (policy.rules_only
            || statements(&text).into_iter().all(|s| read_preference(&text, s, shares_home).is_none()))
}

/// Drops each statement in which the rules find nothing but the sentence model reads a
/// preference: no neutral wording is known for it, so nothing of it is kept. A statement the
/// rules find something in is theirs to rewrite or drop.
fn drop_read_preferences(
    text: &mut String,
    shares_home: bool,
    field: &str,
    policy: Policy,
    findings: &mut Vec<Finding>,
) {
    drop_statements_read(text, shares_home, field, findings, |statement, _| {
        first_match(statement, shares_home, policy).is_none()
    });
}

/// Drops each statement holding one of the rules' rewrites (the findings from `rewrites_from`
/// on) in which the sentence model still reads a preference: with "newlyweds" rewritten,
/// "perfect for anyone just starting out, and once the nursery talk starts you'll want to look
/// elsewhere" still says whom it is for. Only a preference of the rewrite's own category counts:
/// what the rewrite left of the preference, not another reading of the statement. The drop
/// quotes the statement as the client wrote it and takes the place of the rewrites inside it.
fn drop_rewrites_still_read(
    text: &mut String,
    shares_home: bool,
    field: &str,
    rewrites_from: usize,
    findings: &mut Vec<Finding>,
) {
    let rewrites: Vec<(String, String, Category)> = findings[rewrites_from..]
        .iter()
        .filter(|f| f.category != Category::HouseStyle)
        .filter_map(|f| Some((f.replacement.clone()?, f.original.clone(), f.category)))
        .filter(|(replacement, _, _)| !replacement.trim().is_empty())
        .collect();
    let holds = |statement: &str, read: Option<Category>| {
        rewrites.iter().any(|(replacement, _, category)| {
            read.is_none_or(|read| read == *category) && statement.contains(replacement.as_str())
        })
    };
    let dropped_from = findings.len();
    drop_statements_read(text, shares_home, field, findings, holds);
    for dropped in dropped_from..findings.len() {
        for (replacement, original, _) in &rewrites {
            if !findings[dropped].original.contains(replacement.as_str()) {
                continue;
            }
            findings[dropped].original = findings[dropped].original.replacen(replacement.as_str(), original, 1);
            let withdrawn = (rewrites_from..dropped_from).find(|&i| {
                findings[i].replacement.as_deref() == Some(replacement.as_str()) && findings[i].original == *original
            });
            if let Some(i) = withdrawn {
                // Marked by an empty replacement and removed below, so the indices hold meanwhile.
                findings[i].replacement = Some(String::new());
            }
        }
    }
    let mut index = 0;
    findings.retain(|f| {
        index += 1;
        index <= rewrites_from || f.replacement.as_deref() != Some("")
    });
}

/// Drops each statement in which the sentence model reads a preference, with a finding for
/// each. `asks` picks the statements given to the model (called with `None`), then the
/// categories read that count (called with the category).
fn drop_statements_read(
    text: &mut String,
    shares_home: bool,
    field: &str,
    findings: &mut Vec<Finding>,
    asks: impl Fn(&str, Option<Category>) -> bool,
) {
    let read: Vec<_> = statements(text)
        .into_iter()
        .filter(|range| asks(&text[range.clone()], None))
        .filter_map(|range| Some((read_preference(text, range.clone(), shares_home)?, range)))
        .filter(|(category, range)| asks(&text[range.clone()], Some(*category)))
        .collect();
    for (category, range) in &read {
        let original = text[range.clone()].trim().to_string();
        findings.push(Finding { category: *category, field: field.to_string(), original, replacement: None });
    }
    for (_, range) in read.into_iter().rev() {
        text.replace_range(range, "");
    }
}

/// The preference the sentence model reads in the statement at `range` of `text`, its tags'
/// markers left out (the model reads the words, as it learnt them); none where the statement
/// seeks a roommate of one sex and its text `shares_home` (the writer's), which the law allows.
fn read_preference(text: &str, range: std::ops::Range<usize>, shares_home: bool) -> Option<Category> {
    let statement = &text[range];
    // A lone tag or abbreviation ("#Nextdoor", "pref.") states no preference the rules would not
    // read; the model, which learnt from sentences, is not asked. ("Expecting?" is asked.)
    if let [word] = statement.split_whitespace().collect::<Vec<_>>()[..] {
        let abbreviation = word.ends_with('.')
            && word.starts_with(|c: char| c.is_lowercase())
            && word.chars().filter(|c| c.is_alphabetic()).count() <= 5;
        if word.starts_with('#') || abbreviation {
            return None;
        }
    }
    if matching::tells_the_owners_history(statement, Policy::RULES_ONLY) || matching::only_names_agents(statement) {
        return None;
    }
    let category = sentence_model::preference_in(&hashtags::without_any_marker(statement))?;
    let lawful = match category {
        Category::Sex => matching::seeks_a_roommate_of_one_sex(statement, shares_home),
        Category::Disability => matching::lets_assistance_animals_in(statement),
        Category::Steering => matching::praises_diversity(statement),
        Category::Age => matching::states_older_persons_age_rule(text, statement),
        _ => false,
    } || matching::asks_a_signer_of_legal_age(statement)
        || matching::declares_fair_housing(statement)
        || matching::states_a_smoking_rule(statement);
    (!lawful).then_some(category)
}

#[cfg(test)]
mod tests {
    use super::languages::OTHER_LANGUAGES;
    use super::matching::compiled;
    use super::phrases::{AUDIENCE, DESCRIBED, MASTER, RULES};
    use super::*;
    use Category::*;

    fn check(text: &str) -> (String, Vec<Finding>) {
        let mut findings = Vec::new();
        let cleaned = clean(text, "details.description", Policy::default(), &mut findings);
        (cleaned, findings)
    }

    #[test]
    fn every_rule_compiles() {
        assert_eq!(compiled(RULES).len(), RULES.len());
        assert_eq!(compiled(AUDIENCE).len(), AUDIENCE.len());
        assert_eq!(compiled(DESCRIBED).len(), DESCRIBED.len());
        assert_eq!(compiled(OTHER_LANGUAGES).len(), OTHER_LANGUAGES.len());
        assert_eq!(compiled(std::slice::from_ref(&MASTER)).len(), 1);
    }

    /// Sentences a Fair Housing review flags, with the category each must be flagged under.
    const FLAGGED: &[(&str, Category)] = &[
        ("Perfect for families who love the outdoors.", FamilialStatus),
        ("Ideal for a growing family.", FamilialStatus),
        ("A family-friendly street with sidewalks.", FamilialStatus),
        ("Great for couples starting out.", FamilialStatus),
        ("No children please.", FamilialStatus),
        ("Adults only building.", FamilialStatus),
        ("Perfect for empty nesters.", Age),
        ("Empty-nesters will love the single-level plan.", Age),
        ("Ideal for retirees.", Age),
        ("Walking distance to St. Mary's Church.", Religion),
        ("Steps from Temple Beth El.", Religion),
        ("Located in a Christian community.", Religion),
        ("No wheelchairs.", Disability),
        ("Not suitable for handicapped buyers.", Disability),
        ("Tenants must be able-bodied.", Disability),
        ("Quiet white neighborhood.", RaceOrNationalOrigin),
        ("English-speaking only.", RaceOrNationalOrigin),
        ("A true bachelor pad downtown.", Sex),
        ("Cozy loft downtown #NoKidsAllowed", FamilialStatus),
        ("Quiet street #whitesonly", RaceOrNationalOrigin),
        ("Quiet street #no_kids_allowed", FamilialStatus),
        ("Sunny flat #englshonly", RaceOrNationalOrigin),
        ("Roommate wanted to share my condo: Christians preferred.", Religion),
        ("Applications must be completed in English.", RaceOrNationalOrigin),
        ("We will not process forms filled out with an interpreter.", RaceOrNationalOrigin),
        ("What country are you originally from?", RaceOrNationalOrigin),
        ("We love diversity, just not in this building.", Steering),
        ("Guide dogs are permitted in the lobby only.", Disability),
        ("A $250 non-refundable ESA processing fee applies.", Disability),
        ("Provide a physician's statement describing your condition.", Disability),
        ("Menorahs and Diwali lights are banned from balconies.", Religion),
        ("Se pou Ayisyen sèlman.", RaceOrNationalOrigin),
        ("ቤት ለኪራይ — ለኢትዮጵያውያን ብቻ።", RaceOrNationalOrigin),
        ("Guests wearing durags must be escorted.", RaceOrNationalOrigin),
        ("We love diversity... just not in this building.", Steering),
        ("Our 12-unit building: female preferred. Roommates allowed.", Sex),
        ("Room available near I-95, female preferred.", Sex),
        ("Roommate wanted to share my house: healthy female preferred.", Sex),
        ("We welcome all Christian families.", RaceOrNationalOrigin),
        ("Everyone's welcome if you are a U.S. citizen.", RaceOrNationalOrigin),
        ("Include a headshot of every occupant along with photo ID.", Steering),
        ("Submit a selfie holding your passport.", Steering),
        ("只租给会说普通话的人，提供优质服务。", RaceOrNationalOrigin),
        ("There is a $100 fee for each assistance animal.", Disability),
        ("Guide dogs must stay in the lobby.", Disability),
        ("Spanish-speaking tenants preferred.", RaceOrNationalOrigin),
        ("Roommate wanted: Asian female preferred.", RaceOrNationalOrigin),
        ("Room to share my condo, no gay roommates.", Sex),
        ("Female tenants only.", Sex),
        ("只租给会说普通话的人。", RaceOrNationalOrigin),
        ("Appartement pour une famille catholique pratiquante.", Religion),
        ("Solo gente güera, por favor.", RaceOrNationalOrigin),
        ("Perfect for someone who fills the pews every Sunday.", Religion),
        ("Quiet street, well away from the barrio.", Steering),
        ("Please attach a selfie with your application.", Steering),
        ("Great spot for a couple of dudes.", Sex),
        ("Applicants must present a US passport.", RaceOrNationalOrigin),
        ("No alterations allowed, including grab bars.", Disability),
        ("Applicants should list their high school graduation year.", Age),
        ("We steer families like yours toward the east side.", Steering),
        ("Assistance animals still pay the $300 pet deposit.", Disability),
        ("Neighborhood amenities include three churches.", Religion),
        ("Quiet building #englishonly", RaceOrNationalOrigin),
        ("Residents must be able to exit the unit unassisted.", Disability),
        ("Renters who are expecting should look at our other building.", FamilialStatus),
        ("Roommates must be of the same gender.", Sex),
        ("Occupants under eighteen shall not use the lounge.", FamilialStatus),
        ("A higher pet-style deposit applies to tenants who use a wheelchair.", Disability),
        ("Tell us if you intend to retire before the lease ends.", Age),
        ("Finished basement with a man cave.", Sex),
        ("Perfect for a single woman.", Sex),
        ("Women only.", Sex),
        ("Stylish home, NO BOYS ALLOWED!", Sex),
        ("A neighborhood with people just like you.", Steering),
        ("Set in a safe neighborhood.", Steering),
        ("An exclusive enclave.", Steering),
        ("Surrounded by desirable neighbors.", Steering),
        ("Owner\u{2019}s exclusive retreat.", Steering),
        ("\u{201c}Exclusive\u{201d} estate.", Steering),
        ("Home\u{2014}perfect for families.", FamilialStatus),
        ("Adults-only community.", FamilialStatus),
        ("A family-oriented street.", FamilialStatus),
        ("Ideal for a young couple.", FamilialStatus),
        ("Mature adults preferred.", Age),
        ("Christians only.", Religion),
        ("English only.", RaceOrNationalOrigin),
        ("No men.", Sex),
        ("Walking distance to the Church of St. Paul and the park.", Religion),
        ("Black or Hispanic applicants will be turned away.", RaceOrNationalOrigin),
        ("Great home for an LDS family.", Religion),
        ("Applicants from overseas need not apply.", Steering),
        ("Tenants with strong values preferred.", Steering),
        ("You'll fit right in with the neighbors.", Steering),
        ("Residents here are all pale and blond.", Steering),
        ("Perfect for a recent college grad.", Age),
        ("Landlord prefers a Mr. and Mrs.", Sex),
        ("No-animal policy, and that includes service dogs.", Disability),
        ("No childern under 12.", FamilialStatus),
        ("Tenants on welfare will not be considered.", Steering),
        ("The owner would rather rent to another Italian.", RaceOrNationalOrigin),
        ("Occupants must be between 30 and 50.", Age),
        ("Maximum of one child per unit.", FamilialStatus),
        ("No strollers in the hallway.", FamilialStatus),
        ("Wheelchairs will scuff the new floors.", Disability),
        ("Accommodation requests will not be considered.", Disability),
        ("The landlord is more comfortable renting to locals.", Steering),
        ("Tenants who wear a hijab may feel out of place.", Religion),
        ("Agent note: steer Asian buyers to the other building.", Steering),
        ("Are you a citizen? If not, look elsewhere.", RaceOrNationalOrigin),
        ("SWF seeks SWF roommate.", RaceOrNationalOrigin),
        ("Applicants with foreign-sounding names are screened twice.", RaceOrNationalOrigin),
        ("No se aceptan niños.", FamilialStatus),
        ("Chỉ cho người Việt thuê phòng.", RaceOrNationalOrigin),
        ("장애인은 입주할 수 없습니다.", Disability),
        ("Walang bata, pakiusap.", FamilialStatus),
        ("Every guest must be over 25.", Age),
        ("Visitors under 10 are not allowed to stay overnight.", Age),
        ("Each occupant counts from birth toward the limit.", FamilialStatus),
        ("The board will ask about your plans for growing your family.", FamilialStatus),
        ("Residents with toddlers are placed in the rear building.", FamilialStatus),
        ("The block has kept its residents the same for decades.", RaceOrNationalOrigin),
        ("Our neighbors are mostly retirees and like it that way.", Steering),
        ("We cannot consider applicants who are unable to use the stairs.", Disability),
        ("Renters who use power chairs must carry extra liability insurance.", Disability),
        ("No more than two occupants in any three-bedroom unit.", FamilialStatus),
        ("Se renta cuarto a quien hable bien el inglés.", RaceOrNationalOrigin),
        ("Здаю квартиру без дітей.", FamilialStatus),
        ("Only English applications accepted.", RaceOrNationalOrigin),
        ("Ramadan lights are not permitted on balconies.", Religion),
        ("A predominantly white area close to the lake.", RaceOrNationalOrigin),
        ("All guests must be at least 25 years old.", Age),
        ("No guests under 12.", Age),
        ("We cannot host guests who need assistance.", Disability),
        ("Residents who use an electric wheelchair must carry extra insurance.", Disability),
        ("A mostly Korean neighborhood near the park.", RaceOrNationalOrigin),
        ("Applications must be in English.", RaceOrNationalOrigin),
        ("Most of the neighbors are empty nesters.", Steering),
        ("We want tenants who share our background.", RaceOrNationalOrigin),
        ("Hanukkah lights aren't allowed on balconies.", Religion),
        ("Здаю тільки слов'янам.", RaceOrNationalOrigin),
        ("Q: Can I install a ramp at my own cost? A: Sorry, that's not something the owner allows.", Disability),
        ("We are unable to assign a parking spot closer to the elevator for any resident.", Disability),
        ("Best for a renter on the younger side.", Age),
        ("Preference for native Scots.", RaceOrNationalOrigin),
        ("Applicants whose visa paperwork is still pending pay a double deposit.", RaceOrNationalOrigin),
        ("Alleen voor Nederlanders.", RaceOrNationalOrigin),
        ("הדירה לדתיים בלבד.", Religion),
        ("Pokój dla młodych osób do 30 lat.", Age),
        ("Parsi family only.", Religion),
        ("Affittasi stanza solo a ragazze.", Sex),
        ("Q: Is it good for kids? A: No.", FamilialStatus),
        ("FAQ: Do I need to speak English? A: Yes, fluently.", RaceOrNationalOrigin),
        ("Q: Is this a Christian household? A: Yes, and the owner would like to keep it that way going forward.", Religion),
        ("Q: Are kids OK? A: Not this time. Parking is one space, laundry in the basement.", FamilialStatus),
        ("Q: Can I bring my kids, and is there parking? A: Yes to parking, but no to the other thing, sorry.", FamilialStatus),
        ("Hindi pwede ang may anak.", FamilialStatus),
        ("Our 8-unit building has a vacancy. Q: Any preference? A: Female preferred, since you'd be sharing the kitchen with two other tenants.", Sex),
        ("Ενοικιάζεται διαμέρισμα μόνο σε Έλληνες, όχι σε αλλοδαπούς.", RaceOrNationalOrigin),
        ("Kiralık daire, çocuklu aileler ve yabancılar kabul edilmez.", FamilialStatus),
        ("Sadece bayanlara kiralık oda.", Sex),
        ("דירה להשכרה, מתאימה למשפחה יהודית שומרת שבת בלבד.", Religion),
        ("Service animals are allowed only with a $500 pet deposit and $40 monthly pet rent.", Disability),
        ("Brochure headline: Where Young Professionals Live, Work and Play.", Age),
        ("Q: Can only Christians apply? A: Yes.", Religion),
        ("Q: Could you give priority to Christian families? A: Sure.", Religion),
        ("No se aceptan personas mayores de 55 años.", Age),
        ("Tenants must certify that they are HIV-negative.", Disability),
        ("高齢者不可。身体障害者補助犬は可。", Disability),
        ("Applicants must provide a U.S. citizen guarantor.", RaceOrNationalOrigin),
        ("No pets, but service animals are allowed with an additional $300 pet deposit.", Disability),
        ("YABANCILARA KİRALANMAZ.", RaceOrNationalOrigin),
        ("ΜΟΝΟ ΣΕ ΓΥΝΑΙΚΕΣ.", Sex),
        ("Q: Would I share my kitchen? A: No, you'd have your own. Q: Who are you looking for? A: Female tenants preferred.", Sex),
        ("Q: Do I need to be a citizen? A: Yes.", RaceOrNationalOrigin),
        ("Occupancy limited to two persons.", FamilialStatus),
        ("We do not accept emotional support animals or service dogs of any kind.", Disability),
        ("No ESA letters accepted, emotional support animals are pets here.", Disability),
        ("Guide dogs shed like any other dog, so our no-animals policy covers them too.", Disability),
        ("This place really works best for folks with sharp ears.", Disability),
        ("Anyone doing midnight feedings will find the walls too thin.", FamilialStatus),
        ("Play dates and sleepovers are banned in all units.", FamilialStatus),
        ("Before we set up a showing, can I ask when you're due?", FamilialStatus),
        ("The owner knocks $50 off the rent for tenants who register in the parish.", Religion),
        ("I'd suggest our Garden Grove property, where you'd feel more at home.", Steering),
        ("With the accent, I think the Elm Street building would suit you better.", RaceOrNationalOrigin),
        ("Rosaries on rearview mirrors are not permitted anywhere on the property.", Religion),
        ("Q: Can I bring my service animal? A: Only if you pay the pet deposit and monthly pet rent like everyone else.", Disability),
        ("Room in my rental house, landlord doesnt live here, GUYS ONLY pls.", Sex),
        ("I live on site in our 12-unit building and share the laundry: women only.", Sex),
        ("Must have W-2 income; welfare, child support or alimony won't count toward rent.", FamilialStatus),
        ("Looking for digital natives: smart locks, app-only rent, no paper checks.", Age),
        ("Applicants must have their papers in order, and yes, we actually check.", RaceOrNationalOrigin),
        ("The stairs are part of the deal, so don't ask us to move you to the ground floor later.", Disability),
        ("Your household composition will be reviewed by the owner before any showing.", FamilialStatus),
        ("How many would be living there and how old are they?", FamilialStatus),
        ("The association works hard to keep the neighborhood the way it's always been.", Steering),
        ("Solo para personas de fe católica.", Religion),
        ("Videshi log ya jinke paas Indian passport nahi hai, please contact na karein.", RaceOrNationalOrigin),
        ("駅近の1LDK。ご高齢の方の入居はご遠慮いただいております。", Age),
        ("The HOA expects each new owner to put up lights and a nativity scene.", Religion),
        ("Every adult must hold a driver's license, because the owner wants tenants who can get around on their own.", Disability),
        ("Max occupancy is two people total, because the owner doesn't want the wear and tear of a growing household.", FamilialStatus),
        ("User: My guide dog comes everywhere with me, is that ok? Bot: Sorry, this is a strictly no-animals property with no exceptions.", Disability),
        ("Honestly, at your stage of life you'd probably be happier at the Oaks.", Age),
        ("To be approved you'll need to show you have at least fifteen working years ahead of you.", Age),
        ("Our building celebrates Christmas and Easter together, ideal for tenants who share those traditions.", Religion),
        ("We don't set aside parking for anyone's medical needs.", Disability),
        ("Deposit waived for any tenant who agrees to a coffee date with the landlord.", Sex),
        ("Private evening showings for pretty applicants; everyone else, come to the open house.", Sex),
        ("Aluga-se apartamento, não aceitamos cão-guia nem animal de suporte emocional.", Disability),
        ("Alugo apartamento em Copacabana, preferência para pessoas de pele clara.", RaceOrNationalOrigin),
        ("شقة للإيجار، نفضّل مستأجرين من نفس الطائفة فقط.", Religion),
        ("Flat kiraye par hai, lekin koi bimaar ya apahij vyakti nahi chahiye.", Disability),
        ("서울 원룸, 중국 사람만 세입자로 받아요.", RaceOrNationalOrigin),
        ("Kwarto para lang sa mga Pinoy, bawal ang ibang lahi.", RaceOrNationalOrigin),
        ("We'd love folks who look like us on this street.", Steering),
        ("ESAs are basically pets, so the normal pet rent applies.", Disability),
        ("Wohnung in Berlin, keine Blindenhunde.", Disability),
        ("Piso en Madrid; al casero le preocupa que una persona mayor no pueda con las escaleras.", Age),
        ("Our tenants tend to be in a pew on Sunday, and we like it that way.", Religion),
        ("It's a grace-before-dinner kind of building.", Religion),
        ("Tenants must be able to evacuate down the back stairs unassisted.", Disability),
        ("Wheelchair users pay an extra $200 deposit.", Disability),
        ("Best for someone who won't be having little visitors over.", FamilialStatus),
        ("If you've got a bun in the oven, keep looking.", FamilialStatus),
        ("Two bedrooms, and we cap it at one little one.", FamilialStatus),
        ("Would love a roommate from our homeland.", RaceOrNationalOrigin),
        // The writer's own description is the ground of a preference when the same is asked for.
        ("I'm a Muslim woman looking for a housemate like me.", Religion),
        // Children by the gear a home is free of, or that the owner is done with.
        ("Cozy walk-up, stroller-free since the renovation.", FamilialStatus),
        ("The owner upstairs is done with diapers and wants the unit kept that way.", FamilialStatus),
        ("Whole flat, dudes only.", Sex),
        ("As the photos show, a very uniform crowd on this block.", Steering),
        // Tagalog: a Filipino tenant preferred; a churchgoing one.
        ("Gusto ng may-ari ng Pinoy na tenant.", RaceOrNationalOrigin),
        ("Mas gusto ang tenant na nagsisimba tuwing Linggo.", Religion),
        ("Bawal ang may maliit na anak.", FamilialStatus),
        ("Der Vermieter sucht kinderlose Mieter.", FamilialStatus),
        ("Studio au calme, pas de fauteuil roulant.", Disability),
        ("Good hearing is a must for whoever rents the attic.", Disability),
        ("Families with strollers go to the back building; anyone with car seats parks there too.", FamilialStatus),
    ];

    /// Ordinary listing sentences that must pass untouched.
    const CLEAN: &[&str] = &[
        "We welcome applicants of every race, colour, religion, national origin, sex, disability, familial status and age.",
        "Roommate wanted: I'm a guy in my 30s living in the condo I own, looking for a male housemate to share the 2BR.",
        "At this point in life the sellers are happier in a smaller place, so the garden is ready for its next gardener.",
        "Sunny family room with a gas fireplace.",
        "Single-family home on a quiet cul-de-sac.",
        "Walk-in closet and a spa bath in the master bedroom.",
        "Walking distance to the park, shops and the train.",
        "Wheelchair-accessible entrance and a roll-in shower.",
        "Three bedrooms, two baths and a bonus room.",
        "Nursery or office off the primary suite.",
        "Large fenced yard with a play set.",
        "Church Street frontage with off-street parking.",
        "Family-sized kitchen island.",
        "Mid-century modern with original details.",
        "Close to schools, parks and the library.",
        "Separate in-law suite with its own entrance.",
        "Open house Saturday 1-3 pm.",
        "Perfect for family gatherings.",
        "Great for family movie nights.",
        "Quiet single family neighborhood.",
        "Kitchen opens to the family area.",
        "Garage great for a couple of cars.",
        "Living room with a white area rug.",
        "Close to Church Street shops.",
        "Minutes to Chapel Hill.",
        "Near Temple University.",
        "Close to Jefferson Parish schools.",
        "Exclusive right to sell.",
        "Exclusive use of the garage.",
        "2\u{bd} baths and a family room.",
        "Renovated 2018-2021 with permits.",
        "Nonsmokers preferred.",
        "Seller's preferred lender offers a closing credit.",
        "We do not rent to smokers.",
        "Short walk to the Islamic Center of Riverside.",
        "Widow's walk with views of the harbor.",
        "All white kitchen with a farmhouse sink.",
        "The senior center is two blocks away.",
        "Italian family restaurant on the corner.",
        "Located in a 55-and-older community for older persons.",
        "Steps to the French Quarter.",
        "The owner retires next year.",
        "Section 8 vouchers welcome.",
        "About a mile from St. Anne's Catholic Church and the courthouse.",
        "Across from the Boys and Girls Club.",
        "Victorian painted lady with a turret.",
        "Former church converted into lofts.",
        "Detached garage with a man door.",
        "Seller is expecting multiple offers.",
        "Curry Road frontage.",
        "Tenant must be at least 18 to sign the lease.",
        "Walking distance to the Hindu temple, two churches and the public library.",
        "Short walk to a campus offering bachelor's and master's degrees.",
        "Showings 9 AM only.",
        "Benjamin Moore paint, BM White Dove in every room.",
        "Casa de tres recámaras con patio grande.",
        "Se habla español en la oficina.",
        "뒷마당이 넓고 주차 공간이 두 개 있습니다.",
        "Accesible en silla de ruedas.",
        // HUD's advertising guidance: facilities the property has, and a unit type.
        "Apartment complex with chapel and pool.",
        "The chapel on the grounds hosts weddings.",
        "Bachelor studio near the train.",
        "Charming bungalow #JustListed #OpenHouseSaturday",
        "Amenities include a chapel and a gym.",
        "Next to a working dude ranch.",
        "Bring a photo ID to the showing.",
        "Sellers are retiring to Florida.",
        "Service animals pay no pet deposit or pet rent.",
        "We directed them to the parking lot.",
        "Patio where you'll be more comfortable in summer.",
        "Comfortable living in culturally rich Astoria.",
        "The trail crosses the yard and snow is removed by the HOA.",
        "Include pet photos with your application.",
        "No changes needed: grab bars and a ramp already installed.",
        "Service animals welcome, but all other pets must pay a pet fee.",
        "Bring your US passport or driver's license to closing.",
        "A country club set among rolling hills.",
        "Minutes away from Hood River.",
        "Lease runs through your graduation date.",
        "Oven with Sabbath mode for religious observances.",
        "Dude, check out this view!",
        "Finished basement #homesweethome #menlopark",
        "SSI and SSDI income accepted.",
        "Both bedrooms are the same size.",
        "English- and Spanish-speaking agents available.",
        "Attach a photo of each adult's driver's license to the application.",
        "Roommate wanted: female seeking female to share my 2BR apartment.",
        "Open to students, professionals, families, retirees, everyone's welcome.",
        "Our leasing agent speaks Mandarin. 我们的经纪人会说普通话。",
        "Church bells ring from the steeple on Sunday mornings.",
        "Seeking a male roommate for my 2BR condo where I live.",
        "Roommate wanted to share my 3BR house: female preferred.",
        "We're an LGBTQ+-owned brokerage and we welcome everyone.",
        "pref. non-smoker, must pass credit chk.",
        "Applications may be completed in English or Spanish.",
        "No ESA fee is charged.",
        "All holiday decorations, including nativity scenes and menorahs, are banned from balconies.",
        "Holiday decorations, including menorahs and nativity scenes, must be removed by January 15.",
        "Tenant must describe the condition of each room on the move-in checklist.",
        "Service animals welcome, but pets may not enter the pool area.",
        "We don't charge ESA fees.",
        "Assistance animal deposits are not required.",
        "We celebrate diversity, not for a day but every day.",
        "Seller will not accept payment in Chinese yuan.",
        "On Willow Crescent, street parking is not permitted overnight.",
        "Fluent Mandarin staff at the leasing office.",
        "Garden suite #menlo_park_living",
        "The owners raised their two kids here and loved every summer.",
        "Our family spent many happy holidays in this house.",
        "Ask about openings in the senior building across the courtyard.",
        "Tenants may install grab bars or a ramp at their own expense.",
        "Small household appliances are included.",
        "The family dollar and a pharmacy are a block away.",
        "A predominantly white kitchen with brass hardware.",
        "Applications in English or Spanish are accepted.",
        "In this 55+ community, residents are mostly retirees who love golf.",
        "No steps anywhere, ideal for guests who need assistance.",
        "Guests under 2 stay free, pets not allowed.",
        "Residents who use electric scooters or e-bikes must sign a lithium-battery addendum.",
        "Nothing on the way to the beach but dunes and sea grass.",
        "An all-white area rug anchors the living room.",
        "Nuestro agente habla bien inglés y español.",
        "Christmas and Hanukkah lights must be removed by January 15.",
        "No need for modifications such as ramps, the home is all on one level.",
        "Minor changes like grab bars are fine, but painting is not permitted.",
        "This bungalow shares the heritage of the Arts and Crafts homes around it.",
        "We accept not only English applications but also Spanish and Chinese ones.",
        "Changing tables in both restrooms for anyone in diapers.",
        "Our growing family needs more room, so we're selling.",
        "Our family of five loved it here.",
        "Small household pets welcome.",
        "Q: Can kids use the pool? A: Yes, the pool is open to all residents and their guests until 9 pm.",
        "FAQ: Are children allowed? A: Yes, households of every size are welcome within the occupancy limits.",
        "Q: Do I need to speak English? A: No, our office staff speak Spanish, Tagalog and Vietnamese as well.",
        "Tenant: can my kids' bikes go in the storage room? Manager: yes, the bike room is open to everyone.",
        "Chatbot: I can't comment on the demographics of the area, but I can share school and transit info.",
        "Our senior living community offers meal plans and housekeeping.",
        "Pwede ang may anak at may alagang aso.",
        "Please watch for children and pets.",
        "Residents who need help with snow clearing because of a disability can request it at no charge.",
        "Subletting my spare room for the summer; I'm a guy and would prefer a male subletter since we'd share the only bathroom.",
        "Crib and high chair available on request for guests with babies.",
        "Q: Can I bring my service dog? A: No problem, service dogs are always welcome here.",
        "Room in my house. Q: Who are you looking for? A: Female preferred.",
        "Room to share in my flat. Q: Is the bathroom shared? A: Yes, with me. Female roommate preferred.",
        "Q: Can I bring my kids? A: Yes.",
        "Chatbot transcript. User: Do you allow emotional support animals? Bot: Yes. No pet deposit or pet rent applies.",
        "Mieszkanie przystosowane dla osób z niepełnosprawnościami, winda i szerokie drzwi.",
        "駅徒歩5分の2LDK、ペット不可（身体障害者補助犬は可）。",
        "Comunidad para mayores de 55 años; se verifica la edad de todos los residentes.",
        "Se requiere una persona mayor de edad para firmar el contrato.",
        "The lease must be signed by an applicant of legal age.",
        "Site içinde çocuk oyun alanı ve havuz.",
        "İnternet için sadece Türk Telekom altyapısı var.",
        "Διαμέρισμα με δωμάτιο παιδιών και μεγάλο σαλόνι.",
        "דירה ברובע היהודי, קרוב לכותל.",
        "#RoommateWanted to share my flat, female preferred.",
        "Service animals are welcome with the pet deposit waived.",
        "The kitchen appliances are on the older side but work fine.",
        "Two dishwashers, since the previous owners kept kosher.",
        "The sellers observed Shabbat here for forty years.",
        "Mature Scots pines line the drive.",
        "Applicants whose visa application is still pending are welcome; we accept any valid ID.",
        "נדרשים 2 ערבים, ירדתי במחיר, יש חדר ילדים.",
        "Occupancy limited to two persons per bedroom, per local ordinance.",
        "Q: Do I need to be a citizen? A: No, we welcome every applicant who meets the income criteria.",
        "The owner lives in the home and is renting out one bedroom; women only, since the bathroom is shared.",
        "I own the house and live in it; seeking a female housemate to share the kitchen and living room.",
        "The building's elevator runs on a Shabbat setting on Saturdays.",
        "The bonus room is currently set up as a home chapel and converts easily to an office.",
        "Qualifying income may include wages, benefits, Social Security, pensions or child support.",
        "Service animals never pay a pet fee.",
        "Close to Little League fields and the public library.",
        "Owner-occupied: male homeowner seeking a male housemate to share a two-bedroom condo, shared bath.",
        "Q: Is there an age limit? A: Only that leaseholders must be legal adults; anyone can apply.",
        "Bus 14 stops at the corner, and the senior shuttle and school buses stop there too.",
        "The owner installed a stair lift for his father, and it stays with the house.",
        "The owner's late mother tended the rose garden you see in the photos.",
        "The HOA allows exterior religious displays up to two by three feet, the same limit as any other decoration.",
        "Steps to the mosque, the Lutheran church and the Buddhist meditation center on Oak Avenue.",
        "The sellers met at the synagogue down the street and were married in the backyard garden.",
        "A first-floor bedroom makes it easy to host visiting grandparents.",
        "Villetta con giardino, cameretta per i bambini e ampio garage.",
        "Shared housing in my own home: I'm a woman living here full time and I'd like a female housemate for the second bedroom.",
        "I'm a retired teacher renting out the guest room in the home I live in. Seeking a female tenant who doesn't mind a cat.",
        "I own and live in this 3BR house and I'm renting out one furnished bedroom. Looking for a female housemate.",
        "Pet-free building. Assistance animals, including emotional support animals, are not considered pets and are permitted.",
        "Ghar ke paas park, school aur senior citizen club hai.",
        "Service animals and emotional support animals are welcome in every building.",
        "The owner raised her two daughters here and loved the quiet street.",
        "I'm a gay man, 34, renting out the spare room in my condo.",
        "The sellers used the loft as a playroom for their kids.",
        "The owners are downsizing now that the kids have moved out.",
        "My wife and I planted the orchard in 1998.",
        "Eligibility: households in which the head, spouse, or sole member is 62 or older (HUD Section 202).",
        "Guest suite for a live-in caregiver, with its own bath.",
        "Assistance animals are always welcome; where a disability isn't obvious we may ask for documentation.",
        "Flashing smoke detectors and a video doorbell, great for deaf or hard-of-hearing residents.",
        "The office is closed on Christmas Day, Eid al-Fitr and Yom Kippur.",
        "This house was the family's home for thirty years.",
        "Our family celebrates Diwali, so the listing photos show lights.",
        "The kids' growth chart on the pantry door stays.",
        "공정주택법을 준수하며 모든 지원자를 환영합니다.",
        "We love its diversity; come see why.",
        // The owners' or the writer's own household story.
        "As a single mom I loved the fenced yard; now the kids are grown and it's someone else's turn.",
        "After 25 years and three grandchildren, the sellers are moving closer to family.",
        "We hosted every Christmas dinner in this dining room.",
        // A room in the writer's own home: the sex of the housemate may be named.
        "Grad student seeking a female housemate for the spare room in the house I own; shared kitchen.",
        "No tenant will be refused because of religion, disability or national origin.",
        "Your service dog is welcome, and there's no pet deposit for assistance animals.",
        "Accessible en fauteuil roulant, ascenseur et douche de plain-pied.",
        // A place's name with a class word after "the"; a room named for a baby; equal
        // opportunity in Haitian Creole and as questions not asked.
        "Three-minute stroll to the Blind Pass beach access and the pier.",
        "三房两厅，带家庭活动室和婴儿房，需提供收入证明。",
        "Nou aksepte tout moun ki kalifye.",
        "We never ask about kids; the only limit is the local occupancy code.",
        // Roommates for the writer's own home, the writer introduced first.
        "Queer woman who owns a small bungalow, looking for a female roommate to share it with me.",
        "Housemate wanted: I'm a man renting out the spare room in my own flat and would prefer to live with another man.",
        "I'm a guy renting out the spare room in the townhouse I own and live in; looking for a male housemate.",
        "Female only: a room in my flat, sharing the kitchen with me and one other woman.",
        // An accommodation offered in a question; assistance animals let in free, in Spanish.
        "Need an accommodation for a disability? Call the office and we'll work with you.",
        "Se aceptan animales de servicio y de apoyo emocional sin costo adicional.",
    ];

    /// Preferences the rules themselves read, without the sentence model: teenagers told by a
    /// learner's permit, older people by their dinner hour, churchgoers by their Sunday morning,
    /// seizures, a comfort animal asked about before its charge, people across the tracks, a
    /// writer's orientation asked of the roommate too, assistance animals let in only on a
    /// payment, an accommodation refused before it is asked for, conditions asked about.
    #[test]
    fn preferences_told_by_habits_and_conditions_are_read_by_the_rules() {
        for flagged in [
            "History of seizures or fainting spells? The balcony unit isn't for you.",
            "Anyone with a learner's-permit driver in the house should look at our other property.",
            "This one's for the early-bird-dinner set.",
            "Comfort animal? That's an extra $75 a month in pet rent.",
            "Sunday-morning regulars get $100 off the first month.",
            "Safe block, none of the element you see across the tracks.",
            "Gay guy looking for a gay roommate to share my condo.",
            "We'll take a service dog only if the tenant pays the $200 pet deposit.",
            "Q: Can my daughter's support dog come? A: Only if you pay the monthly pet rent.",
            "Don't ask for a closer parking space because of a disability.",
            "Please tell us about any medical conditions before the viewing.",
            "Se aceptan animales de servicio, pero con depósito de mascota.",
            "Anyone who'd need an accommodation for a disability should look elsewhere.",
            "We can't make an accommodation for a disability of any kind.",
            "Q: My son has a service dog, is that OK? A: Sorry, the building only allows cats.",
            "No se aceptan perros de asistencia en el edificio.",
            "Mieszkanie tylko dla białych najemców.",
        ] {
            assert!(!is_clean(flagged, Policy::RULES_ONLY), "{flagged:?}");
        }
    }

    #[test]
    fn proof_and_observance_demanded_are_read_and_concerns_lifted_are_left() {
        for flagged in [
            "We need proof your support animal is on a national registry.",
            "Applicants must disclose any hospitalizations from the last 5 years.",
            "Strict no-strollers policy in the hallways.",
            "Tenants are expected to keep Sunday as a day of rest.",
            "3BR house, max 2 occupants total.",
            "Não aceitamos casais homossexuais nem cão de assistência.",
            "Q: Would you rent the 2BR to me? I'm a woman. A: Sorry, only to men.",
            "Q: Are pets allowed? Ideal for a mature couple. A: Yes.",
            "Q: Is it true you won't rent to families with kids? A: Correct, any of them.",
            "We don't charge application fees, but a pet fee applies to service animals.",
            "We never ask about disabilities, but service dogs must be certified.",
            "Healthy (female) housemate wanted for my flat; I live here.",
            "Service animals allowed only if registered with a national registry.",
            "Assistance animal requests are subject to a $300 processing fee.",
            "Reasonable accommodation requests will be considered after 12 months of tenancy.",
        ] {
            assert!(!is_clean(flagged, Policy::RULES_ONLY), "{flagged:?}");
        }
        for lawful in [
            "Service animals do not need to be registered or certified.",
            "Stroller parking in the lobby.",
            "Service dogs are always welcome; breed and weight limits do not apply to them.",
            "We welcome accommodation requests and never charge pet rent for assistance animals.",
            "Q: I'm pregnant - will that affect my application? A: No. Every applicant is evaluated alike.",
            "Q: Can we apply as a same-sex couple? A: Absolutely, all qualified applicants are welcome.",
            "Chat: renter: do u ask about religion? agent: No, never.",
            "Housemate wanted (female) for my 2BR flat; I live here and we share the kitchen.",
            "Service animals welcome in our LEED-certified building.",
            "Service animals don't have to be registered.",
            "Residents must respect Sunday quiet hours.",
            "Applicants from the reservation list are called in order.",
            "3BR cabin with a loft that sleeps up to 2 people.",
            "User: im trans, is that going to be an issue? Bot: No. Every application is evaluated alike.",
            "Service dogs welcome with no pet deposit.",
            "Accommodation requests are reviewed within 5 business days.",
        ] {
            assert!(is_clean(lawful, Policy::RULES_ONLY), "{lawful:?}");
        }
    }

    #[test]
    fn the_flagged_corpus_is_flagged_under_its_category() {
        for (sentence, category) in FLAGGED {
            let (cleaned, findings) = check(sentence);
            assert!(!findings.is_empty(), "{sentence:?} not flagged");
            assert_eq!(findings[0].category, *category, "{sentence:?}");
            // A rewrite is the rules' own: they judge it.
            assert!(is_clean(&cleaned, Policy::RULES_ONLY), "{sentence:?} -> {cleaned:?} still flagged");
            assert_eq!(findings[0].field, "details.description");
        }
    }

    #[test]
    fn assistance_animals_let_in_are_told_from_animals_let_in_on_conditions() {
        assert!(matching::lets_assistance_animals_in("Service and support animals are welcome in every unit."));
        assert!(matching::lets_assistance_animals_in("Guide dogs are welcome; there's no pet deposit for them."));
        // A comfort animal charged as a pet, read by the rules themselves.
        assert!(!is_clean("Comfort dogs are fine, but there's an extra $50 pet rent.", Policy::RULES_ONLY));
        for conditioned in [
            "Service animals are allowed with the usual pet deposit.",
            "Support animals are only accepted in ground-floor units.",
            "Emotional support animals aren't allowed, but service dogs are welcome.",
        ] {
            assert!(!matching::lets_assistance_animals_in(conditioned), "{conditioned:?}");
        }
    }

    #[test]
    fn model_readings_are_let_pass_only_without_a_limit_or_a_turn() {
        assert!(matching::asks_a_signer_of_legal_age("Se requiere una persona mayor de edad para firmar el contrato."));
        assert!(!matching::asks_a_signer_of_legal_age("Solo personas mayores de edad pueden firmar el contrato."));
        assert!(!matching::asks_a_signer_of_legal_age("The lease is signed by legal adults; no children living here."));
        assert!(matching::declares_fair_housing("공정주택법을 준수하며 모든 지원자를 환영합니다."));
        assert!(!matching::declares_fair_housing("We follow fair housing law, but Korean tenants are preferred."));
        assert!(matching::declares_fair_housing("Helle Wohnung im Innenhof. Alle Bewerber sind willkommen."));
        assert!(matching::declares_fair_housing("Hoan nghênh tất cả mọi người."));
        assert!(matching::declares_fair_housing("We accept applicants regardless of immigration status."));
        assert!(!matching::declares_fair_housing("Alle sind willkommen, außer Familien mit Kleinkindern."));
        assert!(!matching::declares_fair_housing("Hoan nghênh tất cả mọi người, trừ gia đình có trẻ em."));
        assert!(matching::states_a_smoking_rule("Không hút thuốc trong nhà."));
        assert!(!matching::states_a_smoking_rule("Nichtraucher bevorzugt, nur Deutsche."));
        let older_persons = "A 55+ community under HOPA. Age verification for at least one occupant is required.";
        assert!(matching::states_older_persons_age_rule(
            older_persons,
            "Age verification for at least one occupant is required."
        ));
        assert!(!matching::states_older_persons_age_rule(
            older_persons,
            "Scooters are not allowed in the dining room."
        ));
        assert!(!matching::states_older_persons_age_rule(
            "Age verification is required.",
            "Age verification is required."
        ));
        assert!(matching::praises_diversity("I grew up here and love its diversity."));
        assert!(!matching::praises_diversity("We love diversity, just not in this building."));
        assert!(!matching::praises_diversity(
            "Known for its diverse shops, but less diverse neighbours are preferred."
        ));
    }

    #[test]
    fn the_clean_corpus_passes_untouched() {
        for sentence in CLEAN {
            let (cleaned, findings) = check(sentence);
            assert!(findings.is_empty(), "{sentence:?} flagged: {findings:?}");
            assert_eq!(&cleaned, sentence);
        }
    }

    #[test]
    fn a_rewrite_that_still_reads_as_a_preference_drops_its_sentence() {
        // No rule reads the second clause: only the model, after the rewrite, does.
        let written = "Perfect for newlyweds just starting out, and once the nursery talk starts you'll want to look \
                       elsewhere, since this building isn't set up for that.";
        let (cleaned, findings) = check(&format!("{written} Two baths."));
        assert_eq!(cleaned, "Two baths.");
        // One finding: the drop, quoting the sentence as written, in place of the rewrite.
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].category, FamilialStatus);
        assert_eq!(findings[0].original, written);
        assert_eq!(findings[0].replacement, None);
    }

    #[test]
    fn rewrites_read_naturally_and_drops_take_the_sentence() {
        let (cleaned, findings) =
            check("Charming cape in a safe neighborhood. No children. Perfect for families, with a big yard.");
        assert_eq!(cleaned, "Charming cape in an established neighborhood. Perfect for gatherings, with a big yard.");
        assert_eq!(findings.len(), 3);
        assert_eq!(findings[0].original, "safe neighborhood");
        assert_eq!(findings[0].replacement.as_deref(), Some("established neighborhood"));
        assert_eq!(findings[1].original, "No children");
        assert_eq!(findings[1].replacement, None);
        let (cleaned, _) = check("Walking distance to St. Mary's Church and the beach.");
        assert_eq!(cleaned, "Walking distance to local landmarks and the beach.");
        let (cleaned, _) = check("Minutes from the Mormon temple grounds and downtown.");
        assert_eq!(cleaned, "Minutes from local landmarks and downtown.");
        let (cleaned, _) = check("Steps from Temple Beth El, with parking.");
        assert_eq!(cleaned, "Steps from local landmarks, with parking.");
        let (cleaned, _) = check("Within walking distance of Temple Beth El and the park.");
        assert_eq!(cleaned, "Within walking distance of local landmarks and the park.");
        let (cleaned, _) = check("Perfect for families who love the outdoors.");
        assert_eq!(cleaned, "Perfect for those who love the outdoors.");
        let (cleaned, _) = check("Walking distance to the Church of St. Paul and the park.");
        assert_eq!(cleaned, "Walking distance to local landmarks and the park.");
        let (cleaned, _) = check("Charming 3 bed, 2.5 bath condo in an adults only building. Big yard.");
        assert_eq!(cleaned, "Big yard.");
        let (cleaned, _) = check("Near St. Mark's, no kids. Big yard.");
        assert_eq!(cleaned, "Big yard.");
        let (cleaned, _) = check("Home with nice neighbors.");
        assert_eq!(cleaned, "Home with nice surroundings.");
        // A tag is read as its words, and written back as it was where nothing in it is a finding.
        let (cleaned, findings) = check("Sunny loft #JustListed. Quiet street #nokids. Big yard #OpenHouse");
        assert_eq!(cleaned, "Sunny loft #JustListed. Big yard #OpenHouse");
        assert_eq!(findings.len(), 1);
        let (cleaned, findings) = check("Finished basement #mancave, #JustListed");
        assert_eq!(cleaned, "Finished basement #bonusroom, #JustListed");
        assert_eq!(findings[0].original, "#mancave");
    }

    #[test]
    fn rewrites_stay_in_their_sentence_and_keep_its_case() {
        let (cleaned, _) = check("Close to the park. The church next door hosts weddings.");
        assert_eq!(cleaned, "Close to the park.");
        let (cleaned, _) = check("A lovely Christian home with a porch.");
        assert_eq!(cleaned, "A lovely home with a porch.");
        let (cleaned, findings) = check("Set in a safe\nneighborhood close to parks.");
        assert_eq!((cleaned.as_str(), findings.len()), ("Set in an established neighborhood close to parks.", 1));
    }

    #[test]
    fn refusals_are_read_in_every_form_and_lawful_words_only_as_words() {
        for text in [
            "Ideal for 40+ buyers.",
            "Must be born in the U.S. to apply.",
            "We won't sell to outsiders.",
            "Please, applicants with accents need not apply.",
            "The landlord won't accept anyone on food stamps.",
        ] {
            assert!(!check(text).1.is_empty(), "{text:?} not flagged");
        }
        for text in [
            "Listed by Christina Lopez of Harbor Realty.",
            "Text preferred for showings.",
            "You'll feel right at home with three bedrooms.",
            "Appliances no older than 10 years.",
            "Located on Gay Street near Lady Bird Lake.",
        ] {
            assert_eq!(check(text), (text.to_string(), Vec::new()), "{text:?}");
        }
    }

    #[test]
    fn statements_of_equal_opportunity_and_lawful_age_rules_keep_their_reach() {
        for text in [
            "We don't discriminate based on race, religion or national origin.",
            "Near churches, synagogues and mosques.",
            "A 55-and-older community under HOPA; one resident per home must be 55 or older.",
        ] {
            assert_eq!(check(text), (text.to_string(), Vec::new()), "{text:?}");
        }
        for text in [
            // A declaration that turns is a preference.
            "We don't discriminate, but Christian tenants are preferred.",
            // Another faith's place named elsewhere does not make a draw a landmark.
            "Close to a beautiful church. The synagogue is across town.",
            // A lawful screening word covers its own clause only.
            "Nonsmokers preferred; Catholics only.",
            // A lawful context the sentence itself denies.
            "Nobody under 18 may live here, as this is not a 55+ community.",
        ] {
            assert!(!check(text).1.is_empty(), "{text:?} not flagged");
        }
        // Denied in another sentence: an age preference only the model reads is not the
        // exemption's, and its sentence goes.
        let (cleaned, _) = check("We are not a 55+ community. Ideally the tenant is over the age of 50.");
        assert!(!cleaned.contains("age of 50"), "{cleaned:?}");
    }

    #[test]
    fn households_with_children_welcomed_pass_but_welcomed_alone_do_not() {
        for text in ["Families welcome.", "Children are welcome in the shared garden."] {
            assert_eq!(check(text), (text.to_string(), Vec::new()), "{text:?}");
        }
        for text in ["Only families welcome.", "Families only welcome here.", "Childless couples welcome."] {
            let (_, findings) = check(text);
            assert!(!findings.is_empty(), "{text:?} not flagged");
        }
    }

    #[test]
    fn a_place_of_worship_named_by_the_words_before_it_is_a_landmark_unless_they_name_a_class() {
        let text = "Across the road from the Sri Venkateswara temple.";
        assert_eq!(check(text), (text.to_string(), Vec::new()));
        for text in ["Across the road from the Korean church.", "Lovely temples nearby."] {
            assert!(!check(text).1.is_empty(), "{text:?} not flagged");
        }
    }

    /// The phrase rules' verdict alone: whether they change `text`.
    fn rules_change(text: &str) -> bool {
        let mut findings = Vec::new();
        let cleaned = clean(text, "details.description", Policy::RULES_ONLY, &mut findings);
        !findings.is_empty() || cleaned != text
    }

    #[test]
    fn class_words_inside_names_and_qualified_places_are_left_alone() {
        for text in [
            "A converted 1920s chapel with vaulted ceilings.",
            "Loft units in a former Lutheran church.",
            "Built in 1910 as a Quaker meetinghouse.",
            "Forty minutes to Mt. Bachelor.",
            "Located in the heart of the Mother Lode gold country.",
            "Backs onto the Boy Scout camp.",
            "The adjacent lot is owned by Grace Episcopal.",
            "Mt. Zion Baptist hosts the Saturday farmers market.",
            "Bachelor's buttons line the walk.",
            "Men's and women's locker rooms at the gym.",
            "Gym passes to the Jewish Community Center's pool.",
            "The sellers raised three kids here.",
            "Residents with children use the pool on the same terms as everyone else.",
            "Close to the Islamic Center and a great halal butcher.",
        ] {
            assert!(!rules_change(text), "{text:?} changed");
        }
        for text in [
            "Close to the Baptist church.",
            "Perfect for a Christian Family.",
            "Preference goes to applicants who attend Grace Baptist.",
            "Buyers who keep a Saturday Sabbath will be happier elsewhere.",
            "SEEKING CHRISTIAN TENANTS.",
            "We raised the price, so it suits a buyer without kids.",
        ] {
            assert!(rules_change(text), "{text:?} not flagged");
        }
    }

    #[test]
    fn age_limits_fees_on_assistance_animals_and_promised_belonging_are_read() {
        for text in ["AGE LIMIT 40 FOR ALL OCCUPANTS.", "Double deposit required for tenants with guide dogs."] {
            assert!(rules_change(text), "{text:?} not flagged");
        }
        // Staff described are no rule's finding (the sentence model still reads the sentence).
        assert!(!rules_change("Specially trained caregivers are on site around the clock."));
        assert!(rules_change("No caregivers may stay overnight."));
        // The class word rewritten, the promise to the class would stay: the sentence goes.
        let mut findings = Vec::new();
        let text = "Near the kosher deli, so Jewish buyers will feel right at home. Two baths.";
        assert_eq!(clean(text, "d", Policy::RULES_ONLY, &mut findings), "Two baths.");
        // A house-style rewrite names no one: its sentence stays, rewritten.
        let house_style = Policy { master_to_primary: true, ..Policy::RULES_ONLY };
        let text = "The master suite will make you feel right at home.";
        let cleaned = clean(text, "d", house_style, &mut findings);
        assert_eq!(cleaned, "The primary suite will make you feel right at home.");
    }

    /// Preferences told without a class word: by practice, birth year, title, what a tenant
    /// can do unaided, what children bring; and the same words where they describe the home.
    #[test]
    fn preferences_told_by_practice_birth_year_title_and_ability_are_read() {
        for text in [
            "Residents who skip pork or fast for a month may find the kitchen rules difficult.",
            "No one who wears a bindi, please.",
            "If you communicate in sign language, this building isn't for you.",
            "Looking for someone born after 1990.",
            "If you remember rotary phones, this loft isn't your scene.",
            "Lease issued only to an applicant titled Mr.",
            "Unit reserved for applicants with an M on their driver's license.",
            "Must be able to hear the fire alarm on your own.",
            "Please, no sippy cups or crayons in the halls.",
            "Lease ends if a tenant gives birth.",
            "Bring your baptism certificate with the application.",
            "A street that has stayed all-pale for decades.",
            "ITINs and matrícula cards will not be accepted.",
            "Applications with names like DeShawn or Latoya go to the bottom.",
            "Nur für deutschsprachige Mieter.",
            "Perfect for someone who says grace before dinner.",
            "Owner prefers tenants who won't be parking strollers in the hallway.",
            "Landlord prefers applicants with Anglo surnames.",
            "Kids love the playroom.",
            "Ideal roommate celebrates Christmas the way we do.",
            "We will only rent to tenants who keep kosher.",
            "Sorry, no one who is transitioning.",
            "Residents who get around with canes find this park a poor fit.",
            "Anyone who asks for the showing in another language, tell them nothing is available.",
            "If you're expecting, please look elsewhere.",
            "Must have been born after 1990 to match the building's energy.",
            "We don't accept consular IDs or passports from other countries.",
            "Guide dogs and seizure dogs count as pets here.",
            "Community that still honours its original deed restrictions.",
            "Perfect for Christian and Jewish families.",
            "No animals of any kind, including service or emotional support animals.",
            "The owner does not renew leases once a tenant turns seventy.",
            "Staff: if an ID shows a birth year before 1960, say the unit is not a good fit.",
            "Looking for someone who graduated from college over 10 years ago.",
            "Best for someone who can hear the door buzzer without special equipment.",
            "Quote a higher deposit to callers whose accent stands out.",
            "Skip applicants who wouldn't fit in with the neighbors.",
            "We review applicants' social media photos before a showing.",
            "Owner wants a small household in the four-bedroom.",
            "Two people max in the three-bedroom.",
            "Tenants must confirm that no occupant needs a guide dog.",
            "Small dogs only, and that includes assistance animals.",
            "Management will not allow residents to install grab bars.",
            "Please list all medications taken by each occupant.",
            "Guests use the locker room that matches their sex at birth.",
            "A no-under-tens rule applies on the upper floors.",
            "No hopscotch chalk on the walks.",
            "The bylaws ban locs and twists in the lobby.",
            // The sellers' own family excuses its own words, not a preference beside them.
            "The sellers raised their kids elsewhere and think this flat suits grown-ups more than kids.",
            "The owners moved closer to their grandkids and would rather a buyer whose toddlers are grown.",
            "Income from any lawful source counts, though the owner would rather the kids stay away.",
            // An applicant asked their age or medicines, minors capped, vouchers sent elsewhere,
            // one faith's holiday alone.
            "How old are you, and when do you plan to retire?",
            "Does anyone in the household take any prescription medications?",
            "At most two occupants under 18 per unit.",
            "Voucher holders should look elsewhere.",
            "Door decorations are fine in December, just Christian ones.",
            "The previous owners, a retired couple, hope the buyer is retired too.",
            "The ideal owners, a retired couple, will love the single-level layout.",
            "Perfect for new owners, a retired couple perhaps.",
            // A minimum age above any age of majority, soundness of body demanded, help with
            // daily living refused, people from a background, a race required.
            "Renters must be at least 35 years old.",
            "Every occupant must be free of any mental health conditions.",
            "Best suited to a renter who is healthy in body and sound of mind.",
            "Residents must not need any help with daily living.",
            "Seeking renters from an Asian background.",
            "Tenants must be white to be considered.",
        ] {
            assert!(rules_change(text), "{text:?} not flagged");
        }
        for text in [
            "The roses thrive if you remember to water them.",
            "Self-guided tours: see the home on your own schedule.",
            "Our property manager, who speaks Spanish and English, answers within a day.",
            "Appliances from names like Bosch and Miele.",
            "The kitchen has all white cabinets.",
            "A sign-language interpreter is available at showings on request.",
            "Built in 1962 and updated throughout.",
            "Residents who have a cross-country commute are minutes from the interstate.",
            "Stroller-friendly sidewalks lead to the park.",
            "Kids' bunk room with a reading nook.",
            "The original owner's prized 'Grandma's rose garden' along the fence.",
            "Gentleman farmer's barn with four stalls.",
            "The downtown Diwali and Holi festivals are a short bus ride away.",
            "The Ramadan night bazaar is a neighborhood highlight.",
            "The seller's grandparents built the house.",
            "If you're expecting guests, the guest suite has its own bath.",
            "We accept passports from other countries as ID.",
            "Tenants must be able to pass a credit check.",
            "Residents who have ham radios can use the roof antenna mount.",
            "Tenants who have scooters can park them in the bike room.",
            "Showings are available in another language on request.",
            "The block has a bakery, a taqueria and a halal grill.",
            "Clubhouse for birthday parties and baby showers.",
            "Two sinks, a layout often chosen for kosher cooking.",
            "The elevator runs in Sabbath mode on Saturdays.",
            "Built in 1892 as a Methodist church and converted into lofts in 2015.",
            "Walk to Mother's Kitchen Cafe and Father Tom's Pub.",
            "The addition doesn't fit in with the original house, so it is priced as is.",
            "Two people max in the studio's loft bed.",
            "Golden Years Antiques is across the street.",
            "Walk to Our Lady of Peace and the Jewish Community Center.",
            "The sellers raised their kids here and are moving closer to their grandkids.",
            "Braided rugs and twisted iron railings throughout.",
            "How old is the roof? About six years.",
            "Only Christmas week is blacked out for showings.",
            "The handcrafted Amish dining set conveys, and so does the Amish-built shed.",
            "The seller, a retired nurse, added handrails on both staircases.",
            "The previous owners, a retired couple, installed the solar panels in 2019.",
            "At most one occupant under two in addition to two per bedroom, per the local code.",
            "Applicants must be at least 18 years of age to sign the lease.",
            "Trees must be at least 30 feet from the septic field.",
            "The sound of the creek carries into the primary suite.",
            "The smart-home hub means you won't need help with the daily chores of lighting and heat.",
            "Our agent comes from a finance background and can walk you through the numbers.",
            "Trim and shutters must be white under the HOA's rules.",
        ] {
            assert!(!rules_change(text), "{text:?} changed");
        }
    }

    #[test]
    fn a_dropped_clause_takes_the_clauses_joined_to_it_by_a_semicolon() {
        let (cleaned, findings) = check("Bright studio. Fits one person; we will not rent to a couple with kids.");
        assert_eq!(cleaned, "Bright studio.");
        assert_eq!(findings.len(), 1);
    }

    #[test]
    fn a_text_with_many_findings_is_cleaned_to_the_end() {
        let text = "Safe neighborhood, exclusive. ".repeat(100);
        let (cleaned, findings) = check(&text);
        assert_eq!(findings.len(), 200);
        assert!(is_clean(&cleaned, Policy::default()) && cleaned.starts_with("Established neighborhood, distinctive."));
    }

    /// A preference in words no rule lists is read by the sentence model; its statement goes, the
    /// sentences around it stay.
    #[test]
    fn the_sentence_model_drops_a_preference_the_rules_pass() {
        let dropped = "We'd love someone who won't need the elevator.";
        let text = format!("Sunny two-bedroom with a balcony. {dropped} Gas heat.");
        let rules = Policy::RULES_ONLY;
        let mut by_rules = Vec::new();
        assert_eq!(clean(&text, "details.description", rules, &mut by_rules), text);
        assert!(by_rules.is_empty(), "{by_rules:?}");
        assert!(is_clean(&text, rules) && !is_clean(&text, Policy::default()));
        let (cleaned, findings) = check(&text);
        assert_eq!(cleaned, "Sunny two-bedroom with a balcony. Gas heat.");
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!((findings[0].original.as_str(), findings[0].replacement.as_deref()), (dropped, None));
    }

    #[test]
    fn master_is_rewritten_only_when_the_deployment_says_so() {
        let text = "Master bedroom with a walk-in closet.";
        assert!(is_clean(text, Policy::default()));
        let mut findings = Vec::new();
        let cleaned =
            clean(text, "details.features[0]", Policy { master_to_primary: true, ..Policy::default() }, &mut findings);
        assert_eq!(cleaned, "Primary bedroom with a walk-in closet.");
        assert_eq!(findings[0].category, HouseStyle);
    }
}
