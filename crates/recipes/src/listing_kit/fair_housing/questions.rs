//! A listing's questions and answers ("Q: Is the yard fenced? A: Yes, all the way round."). The
//! question is a reader's, not the writer's statement, so what it names ("Q: Is it good for
//! kids?") states no preference; the answer does. An answer that says little of its own takes
//! its sense from the question ("Q: Do I need to speak English? A: Yes."), and the two are read
//! as one statement; one that only grants the leave asked ("Q: Can I bring my kids? A: Yes.")
//! or only denies a concern the reader raises ("Q: I use a wheelchair, is that a problem? A: Not
//! at all.") states no preference. A reader's short remark between the question and the answer
//! ("Q: Would you rent it to me? I'm a woman. A: ...") is read with the two, always.

use super::matching::regex_once;
use super::text::statements;
use regex::Regex;
use std::borrow::Cow;
use std::sync::OnceLock;

/// A stretch of a text as the check reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Part<'a> {
    /// Text read as it stands.
    Read(&'a str),
    /// A reader's question (with its label, "Q:") and the answer given (with its label, "A:").
    Answered {
        /// "Q: Is parking included?"
        question: &'a str,
        /// "A: One space per flat."; it runs to the next question or the end of the text.
        answer: &'a str,
    },
}

impl Part<'_> {
    /// The text the check reads for this part: a text as it stands, an answer that stands alone
    /// (see [`answer_stands_alone`]), or else the question and its answer as one; none when the
    /// answer only grants the leave asked ("Q: Do you allow support animals? A: Yes.") or only
    /// denies the concern asked about ("Q: I'm pregnant, is that a problem? A: No."), which
    /// state no preference whatever the question names. A question with a remark after it is
    /// always read with its answer, so the remark is read too.
    pub(super) fn as_checked(&self) -> Option<Cow<'_, str>> {
        match *self {
            Part::Read(read) => Some(Cow::Borrowed(read)),
            Part::Answered { question, .. } if has_a_remark(question) => Some(self.as_written()),
            Part::Answered { question, answer } if only_grants_leave(question, answer) => None,
            Part::Answered { question, answer } if only_lifts_a_concern(question, answer) => None,
            Part::Answered { question, answer } if answer_stands_alone(question, answer) => Some(Cow::Borrowed(answer)),
            Part::Answered { .. } => Some(self.as_written()),
        }
    }

    /// The part as written.
    pub(super) fn as_written(&self) -> Cow<'_, str> {
        match *self {
            Part::Read(read) => Cow::Borrowed(read),
            Part::Answered { question, answer } => Cow::Owned(format!("{question} {answer}")),
        }
    }
}

/// Who asks, as a label before the question ("Q:", "Tenant:", a chat's "User:").
const ASKER: &str = "q|question|applicant|tenant|renter|guest|caller|buyer|prospect|user|visitor|customer|client|lead";

/// Who answers, as a label before the answer ("A:", "Manager:", a chat's "Bot:").
const ANSWERER: &str =
    "a|answer|manager|landlord|landlady|owner|host|agent|management|office|leasing office|bot|chatbot|assistant|reply";

/// How a reader's question starts: it asks ("Can I ...", "Is there ...", "I'm 72, is that a
/// problem?"). A writer's pitch put as a question ("Q: Why is this flat perfect for ...?",
/// "Q: Looking for ...?") is the writer's statement and is read as one.
const ASKING: &str = "can|could|may|might|is|are|was|were|do|does|did|will|would|should|shall|am|have|has|what|what's|how|where|when|which|who|any|i'm|im|i am|i have|we're|we are|we have|my|our|if|hi|hello";

/// The longest answer, in words after its label, that is read with its question: "Sorry, no
/// kids." says too little to stand alone.
const LONGEST_ANSWER_READ_WITH_ITS_QUESTION: usize = 6;

/// The longest remark, in characters with its full stop, a reader may add after the question
/// and before its answer ("Q: Would you rent it to me? I'm a woman. A: ..."): the remark is read
/// with the question.
const LONGEST_REMARK: usize = 80;
/// A remark's characters between its first and its last.
const REMARK_BODY: usize = LONGEST_REMARK - 2;

/// `text` cut into its questions with their answers and the text around them. A question is
/// one sentence that asks, with a short remark after it; its answer is the first sentence after
/// the answer's label (and the one after that when the first only assents), and what follows it
/// is read as it stands.
/// Each part is trimmed; a text with no "Q: ...? A: ..." is one [`Part::Read`].
pub(super) fn parts(text: &str) -> Vec<Part<'_>> {
    static ASKED: OnceLock<Option<Regex>> = OnceLock::new();
    // The question holds no sentence end: a full stop counts unless a letter follows ("U.S").
    let Some(asked) = regex_once(
        &ASKED,
        &format!(
            r"(?i)\b(?:faq:\s*(?:q[:.]\s*)?|(?:{ASKER}):\s|q\.\s)(?:{ASKING})\b(?:[^?!;.\n]|\.\S){{0,300}}\?(?:\s+[^\s?!;.:\n][^?!;.:\n]{{0,{REMARK_BODY}}}[.!])?(?P<gap>\s*)(?P<answer>\b(?:{ANSWERER}):\s|a\.\s)"
        ),
    ) else {
        return vec![Part::Read(text)];
    };
    let found: Vec<(usize, usize, std::ops::Range<usize>)> = asked
        .captures_iter(text)
        .filter_map(|c| Some((c.get(0)?.start(), c.name("gap")?.start(), c.name("answer")?.range())))
        .collect();
    let mut parts = Vec::new();
    let mut read_from = 0;
    for (i, (start, question_end, label)) in found.iter().enumerate() {
        let (start, question_end) = (*start, *question_end);
        let next_question = found.get(i + 1).map_or(text.len(), |next| next.0);
        let before = text[read_from..start].trim();
        if !before.is_empty() {
            parts.push(Part::Read(before));
        }
        // The first sentence after the label ("A." would end one of its own); a bare assent
        // ("A: Yes.") takes the sentence after it, which may qualify it ("Only one under 5.").
        let answered = &text[label.end..next_question];
        let sentences = statements(answered);
        let first_end = sentences.first().map_or(answered.len(), |first| first.end);
        let answer_end = label.end
            + match sentences.get(1) {
                Some(next) if is_a_bare_assent(&answered[..first_end]) => next.end,
                _ => first_end,
            };
        parts.push(Part::Answered {
            question: text[start..question_end].trim(),
            answer: text[label.start..answer_end].trim(),
        });
        read_from = answer_end;
    }
    let rest = text[read_from..].trim();
    if !rest.is_empty() || parts.is_empty() {
        parts.push(Part::Read(rest));
    }
    parts
}

/// Whether `answer` says what it says without `question`: it is more than a few words, it does
/// not set a condition on what was asked ("Only if you pay the pet deposit ..."), it does not
/// refuse what the question asks leave for ("Q: Can I bring my kids? A: No, ...", "..., so
/// he'd rather not.", "Yes to parking, but no to the other thing."), and it does not agree to
/// what the question asks, unless the question asks leave ("Q: Can kids use the pool? A: Yes,
/// ...") rather than whether a thing is required ("Q: Must I be a citizen? A: Yes, ...") or
/// true ("Q: Is this a Christian household? A: Yes, and ..."). Refusing a requirement ("Q: Do I
/// need to speak English? A: No, our staff speak Spanish and Tagalog too.") stands alone, and so
/// does, however short, a concern denied or leave granted that goes on only to treat every
/// applicant alike ("A: No. Every applicant is evaluated on the same criteria."). An answer
/// after a reader's remark never stands alone.
pub(super) fn answer_stands_alone(question: &str, answer: &str) -> bool {
    static REFUSES: OnceLock<Option<Regex>> = OnceLock::new();
    static CONDITIONAL: OnceLock<Option<Regex>> = OnceLock::new();
    if has_a_remark(question) {
        return false;
    }
    let said = what_is_said(answer);
    // "Q: I'm pregnant, will that affect my application? A: No. Every applicant is evaluated on
    // the same criteria.": a concern lifted, then a rule for everyone, says what it says alone.
    if lifts_a_concern(question, said).is_some_and(speaks_of_everyone) || grants_leave_to_everyone(question, said) {
        return true;
    }
    if said.split_whitespace().count() <= LONGEST_ANSWER_READ_WITH_ITS_QUESTION {
        return false;
    }
    // "Only if you pay the pet deposit like everyone else": a condition on what was asked, which
    // says nothing without it.
    let conditional = regex_once(
        &CONDITIONAL,
        r"(?i)^(only (if|with|when|after|once)|as long as|so long as|provided( that)?|on condition( that)?|if you)\b",
    );
    if conditional.is_some_and(|conditional| conditional.is_match(said)) {
        return false;
    }
    let refuses = regex_once(
        &REFUSES,
        r"(?i)^(no|nope|sorry|unfortunately|afraid not|not (really|at the moment|right now|here|this time))\b|\b((would|'d|’d) rather not|(not|isn't|isn’t) (a )?(good |great |the right )?(fit|match)|(won't|wouldn't|will not|would not) (work|be (possible|suitable))|but (no|not)\b)",
    );
    let (Some(refuses), Some(grants)) = (refuses, grants()) else {
        return false;
    };
    let granted = grants.is_match(said);
    let refused = refuses.find_iter(said).any(|refusal| !(granted && refusal.start() == 0));
    let asks_a_requirement = asks_a_requirement(question);
    let agrees_to_more_than_leave = granted && !asks_only_leave(question);
    !((refused && !asks_a_requirement) || (granted && !refused && agrees_to_more_than_leave))
}

/// Whether `answer` grants the leave `question` asks for the reader and says nothing else ("Q:
/// Can I bring my kids? A: Of course!"). Only a question that asks permission counts ("Can I
/// ...", "Are pets allowed?", "Do you accept ...?"), never one that asks whether something is
/// required or true ("Q: Is it adults only? A: Yes.", "Q: Is it true kids aren't welcome? A:
/// Yes."), asks something of the writer ("Could you give priority to ...?") or holds a negation
/// ("Do you not allow ...?").
fn only_grants_leave(question: &str, answer: &str) -> bool {
    permits().is_some_and(|permits| says_only(what_is_said(answer), permits)) && asks_permission(question)
}

/// Whether `question` asks permission for the reader ("Can I ...", "Are pets allowed?", "Do you
/// accept ...?", "We're a same-sex couple, is that OK?") and nothing more: not whether something
/// is required or true, nothing of the writer, no negation.
fn asks_permission(question: &str) -> bool {
    static ASKS_PERMISSION: OnceLock<Option<Regex>> = OnceLock::new();
    static NEGATION: OnceLock<Option<Regex>> = OnceLock::new();
    let asks_permission = regex_once(
        &ASKS_PERMISSION,
        r"(?i)^((can|could|may) (i|we|my|our)\b|(do|does|will|would) (you|the (owner|landlord|building|property|complex|park|hoa)) (allow|accept|permit|welcome|take|rent to)\b|(are|is) [^?]{1,60}\b(allowed|permitted|welcome|ok|okay|accepted)\?)|, (is|would) (that|this|it) (be )?(ok|okay|alright|all right|fine|allowed|acceptable)\?$",
    );
    let negation = regex_once(&NEGATION, r"(?i)\b(not|never|no)\b|n['’]t\b");
    let (Some(asks_permission), Some(negation)) = (asks_permission, negation) else {
        return false;
    };
    let asked = what_is_said(question);
    asks_permission.is_match(asked) && !negation.is_match(asked) && !asks_a_requirement(asked)
}

/// Whether a reader's remark follows the question ("Q: Would you rent it to me? I'm a woman."):
/// a question without one ends at its question mark.
fn has_a_remark(question: &str) -> bool {
    !question.trim_end().ends_with('?')
}

/// Whether `answer` only lifts the concern `question` raises about the reader ("Q: I use a
/// wheelchair, is that a problem? A: Not at all."): no preference is stated.
fn only_lifts_a_concern(question: &str, answer: &str) -> bool {
    lifts_a_concern(question, what_is_said(answer)).is_some_and(|rest| !rest.chars().any(char::is_alphanumeric))
}

/// Where `question` asks whether something about the reader is a problem or counts against
/// them ("..., is that a problem?", "Will that affect my application?"), or whether the writer
/// asks about it or requires it ("Do you ask about religion?"), and `said` denies it
/// ("No.", "Not at all", "Of course not"), what `said` goes on to say after the denial.
fn lifts_a_concern<'a>(question: &str, said: &'a str) -> Option<&'a str> {
    static CONCERN: OnceLock<Option<Regex>> = OnceLock::new();
    static DENIAL: OnceLock<Option<Regex>> = OnceLock::new();
    let concern = regex_once(
        &CONCERN,
        r"(?i)\b(is|would|will|does|could|might) (that|this|it) (going to )?(be )?(a |an |any )?(problem|issue|concern|dealbreaker|deal-breaker|obstacle)\b|\b(will|would|does|could|might|is) (that|this|it) (going to )?(affect|matter|hurt|count against|impact|disqualify)\b|\bany (problems?|issues?) with (that|this)\b|^(do|does|will|would|did) (you|u|ya|they|the (owner|landlord|landlady|manager|management|hoa|agent|seller)) (ever )?(ask|check|care|screen|discriminate|require|need)\b",
    )?;
    let denial = regex_once(
        &DENIAL,
        r"(?i)^((no problem|not a problem|no issue|not at all|of course not|absolutely not|certainly not|not in the (least|slightest)|nope|none|never|no)\b[.,!;:\s]*)+",
    )?;
    let denied = denial.find(said)?;
    concern.is_match(what_is_said(question)).then_some(&said[denied.end()..])
}

/// Whether `said` permits what `question` asks leave for ([`asks_permission`]) and goes on only
/// to treat everyone alike ("Q: Can we apply as a same-sex couple? A: Absolutely, all qualified
/// applicants are welcome.").
fn grants_leave_to_everyone(question: &str, said: &str) -> bool {
    let Some(granted) = permits().and_then(|permits| permits.find(said)) else { return false };
    asks_permission(question) && speaks_of_everyone(&said[granted.end()..])
}

/// Whether `rest` is one clause that treats every applicant alike, with no condition or exception
/// ("Every applicant is evaluated on the same criteria", "all qualified applicants are
/// welcome"); "we'd move you to building C with all the others" is not.
fn speaks_of_everyone(rest: &str) -> bool {
    static EVERYONE: OnceLock<Option<Regex>> = OnceLock::new();
    static EXCEPTION: OnceLock<Option<Regex>> = OnceLock::new();
    let everyone = regex_once(
        &EVERYONE,
        r"(?i)^(every|each|all|any)( qualified| eligible| prospective)? (applicants?|applications?|renters?|tenants?|residents?|one|body|people|households?|families)\b[^,;:]*\b(welcome|welcomed|evaluated|treated|considered|screened|judged|reviewed|processed|held)\b[^,;:]*$",
    );
    let exception = regex_once(
        &EXCEPTION,
        r"(?i)\b(but|only|unless|except|if|as long as|so long as|provided|though|although|however|just not|other than)\b",
    );
    let (Some(everyone), Some(exception)) = (everyone, exception) else { return false };
    let rest = rest.trim_matches(|c: char| c.is_whitespace() || matches!(c, ',' | '.' | '!' | ';' | ':'));
    everyone.is_match(rest) && !exception.is_match(rest)
}

/// Whether `said` assents and says nothing more ("Yes.", "Of course!", "Correct.").
fn is_a_bare_assent(said: &str) -> bool {
    grants().is_some_and(|grants| says_only(said.trim(), grants))
}

/// Whether `said` is what `words` match at its start and nothing more but punctuation.
fn says_only(said: &str, words: &Regex) -> bool {
    words.find(said).is_some_and(|found| !said[found.end()..].chars().any(char::is_alphanumeric))
}

/// An answer without its label ("A:", "Bot:").
fn what_is_said(answer: &str) -> &str {
    answer.split_once([':', '.']).map_or(answer, |(_, said)| said).trim()
}

/// How an answer permits ([`PERMITTING`]).
fn permits() -> Option<&'static Regex> {
    static PERMITS: OnceLock<Option<Regex>> = OnceLock::new();
    regex_once(&PERMITS, &format!(r"(?i)^({PERMITTING})\b"))
}

/// Assents that permit ("Sure", "Of course", "No problem").
const PERMITTING: &str =
    "yes|yep|yeah|yup|sure|absolutely|of course|certainly|no problem|no worries|not a problem|you bet|please do";

/// Assents that only confirm what was said ("Correct", "Indeed").
const CONFIRMING: &str = "definitely|correct|that's right|indeed|totally";

/// How an answer assents: it permits or confirms.
fn grants() -> Option<&'static Regex> {
    static GRANTS: OnceLock<Option<Regex>> = OnceLock::new();
    regex_once(&GRANTS, &format!(r"(?i)^({PERMITTING}|{CONFIRMING})\b"))
}

/// Whether `question` asks whether something is required ("Do I need to ...", "Must I ...",
/// "... only?").
fn asks_a_requirement(question: &str) -> bool {
    static REQUIRES: OnceLock<Option<Regex>> = OnceLock::new();
    regex_once(
        &REQUIRES,
        r"(?i)\b(need|needs|have to|has to|must|required?|requirements?|mandatory|necessary|compulsory|obligatory|only)\b",
    )
    .is_none_or(|requires| requires.is_match(question))
}

/// Whether `question` asks leave ("Can I ...", "Are kids allowed?") and nothing is required.
fn asks_only_leave(question: &str) -> bool {
    static ASKS_LEAVE: OnceLock<Option<Regex>> = OnceLock::new();
    let asks_leave = regex_once(
        &ASKS_LEAVE,
        r"(?i)\b(can|could|may|might|allowed|permitted|welcome|ok|okay|accepted|accept|accepts|allow|allows|permit|permits|rent to)\b",
    );
    !asks_a_requirement(question) && asks_leave.is_some_and(|asks_leave| asks_leave.is_match(question))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_without_questions_is_read_as_it_stands() {
        assert_eq!(
            parts("Sunny kitchen. Is parking included? Yes."),
            vec![Part::Read("Sunny kitchen. Is parking included? Yes.")]
        );
        assert_eq!(parts(""), vec![Part::Read("")]);
        assert_eq!(parts("Duplex side A: 2 bed, 1 bath."), vec![Part::Read("Duplex side A: 2 bed, 1 bath.")]);
    }

    #[test]
    fn questions_and_their_answers_are_cut_apart() {
        let text = "Our FAQ. Q: Is parking included? A: One space. Q. Are pets allowed? A. Cats only, sorry. Call us.";
        assert_eq!(
            parts(text),
            vec![
                Part::Read("Our FAQ."),
                Part::Answered { question: "Q: Is parking included?", answer: "A: One space." },
                Part::Answered { question: "Q. Are pets allowed?", answer: "A. Cats only, sorry." },
                Part::Read("Call us."),
            ]
        );
        let labelled = "FAQ: Are children allowed? A: Yes. Tenant: Can bikes go inside? Manager: In the bike room.";
        assert_eq!(
            parts(labelled),
            vec![
                Part::Answered { question: "FAQ: Are children allowed?", answer: "A: Yes." },
                Part::Answered { question: "Tenant: Can bikes go inside?", answer: "Manager: In the bike room." },
            ]
        );
    }

    #[test]
    fn a_remark_after_the_question_is_read_with_it() {
        let text = "Q: Would you rent the 2BR to me? I'm a woman. A: Sorry, only to men. Call us.";
        assert_eq!(
            parts(text),
            vec![
                Part::Answered {
                    question: "Q: Would you rent the 2BR to me? I'm a woman.",
                    answer: "A: Sorry, only to men."
                },
                Part::Read("Call us."),
            ]
        );
        // Two sentences between are not a remark: the text is read as it stands.
        let spread = "Q: Is it quiet? I work nights. I sleep days. A: Very quiet.";
        assert_eq!(parts(spread), vec![Part::Read(spread)]);
    }

    #[test]
    fn a_concern_lifted_or_leave_given_to_everyone_states_no_preference() {
        let concern = "User: I have an emotional support cat, is that a problem?";
        assert!(only_lifts_a_concern(concern, "Bot: Not at all."));
        assert!(!only_lifts_a_concern(concern, "Bot: Yes, sorry."));
        assert!(!only_lifts_a_concern("Q: Can I bring my cat?", "A: No."));
        assert!(only_lifts_a_concern("renter: do u ask about religion?", "agent: No, never."));
        assert!(!only_lifts_a_concern("Q: Does the owner consider families?", "A: No."));
        let pregnant = "Q: I'm pregnant - will that affect my application?";
        assert!(answer_stands_alone(pregnant, "A: No. Every applicant is evaluated on the same criteria."));
        assert!(!answer_stands_alone(pregnant, "A: No, but the owner prefers adults."));
        assert!(!answer_stands_alone(pregnant, "A: No, we would move you to building C."));
        let couple = "Q: Can we apply as a same-sex couple?";
        assert!(answer_stands_alone(couple, "A: Absolutely, all qualified applicants are welcome."));
        assert!(!answer_stands_alone(couple, "A: Yes, if all of you sign."));
        assert!(!answer_stands_alone(pregnant, "A: No, we would move you to building C with all the others."));
        let refused = "Q: Is it true you won't rent to families with kids?";
        assert!(!answer_stands_alone(refused, "A: Correct, any of them."));
        assert!(!answer_stands_alone(refused, "A: Yes, all of them."));
        assert!(only_lifts_a_concern("Q: I have a cat, is that a problem?", "A: No problem."));
        // A remark is never passed over.
        let remark = "Q: I have a service dog, is that a problem? Adults-only building btw.";
        assert_eq!(
            parts(&format!("{remark} A: Not at all."))[0].as_checked().as_deref(),
            Some(&*format!("{remark} A: Not at all."))
        );
    }

    #[test]
    fn a_pitch_put_as_a_question_or_a_question_over_sentences_is_read_as_it_stands() {
        let pitch = "Q: Why is this flat perfect for a young couple? A: One bedroom and a quiet street.";
        assert_eq!(parts(pitch), vec![Part::Read(pitch)]);
        let spread = "Tenant: pays gas. Perfect for a young couple. Why rent from us? Owner: we fix things fast.";
        assert_eq!(parts(spread), vec![Part::Read(spread)]);
    }

    #[test]
    fn a_short_answer_is_read_with_its_question() {
        assert!(!answer_stands_alone("Q: Is it good for kids?", "A: Not really, sorry."));
        assert!(!answer_stands_alone("Q: Do I need to speak English?", "A: Yes."));
    }

    #[test]
    fn refusing_leave_or_granting_a_requirement_is_read_with_the_question() {
        let refused = "A: No, the owner has decided the flat suits other kinds of tenants better.";
        assert!(!answer_stands_alone("Q: Can I bring my kids?", refused));
        let granted = "A: Yes, every adult on the lease will be asked for that at the viewing.";
        assert!(!answer_stands_alone("Q: Must I show a passport?", granted));
        let declined = "A: The owner had a bad experience before, so he'd rather not.";
        assert!(!answer_stands_alone("Q: Are Sikh tenants welcome?", declined));
        let half = "A: Yes to parking, but no to the other thing, sorry.";
        assert!(!answer_stands_alone("Q: Can I bring my kids, and is there parking?", half));
        let adopted = "A: Yes, and the owner would like to keep it that way going forward.";
        assert!(!answer_stands_alone("Q: Is this a Christian household?", adopted));
    }

    #[test]
    fn a_bare_assent_to_leave_asked_is_not_read() {
        assert!(only_grants_leave("Q: Can I bring my kids?", "A: Yes."));
        assert!(only_grants_leave("User: Do you allow emotional support animals?", "Bot: Of course!"));
        assert!(!only_grants_leave("Q: Is it adults only?", "A: Yes."));
        assert!(!only_grants_leave("Q: Can only Christians apply?", "A: Yes."));
        assert!(!only_grants_leave("Q: Do I need to be a citizen?", "A: Yes."));
        assert!(!only_grants_leave("Q: Can I bring my kids?", "A: Yes, if they are over 12."));
        // What follows a bare assent qualifies it, and is read with it.
        let qualified = "User: Can my kids visit? Bot: Sure! Only on weekends. Q: Is there parking? A: Yes.";
        assert_eq!(
            parts(qualified),
            vec![
                Part::Answered { question: "User: Can my kids visit?", answer: "Bot: Sure! Only on weekends." },
                Part::Answered { question: "Q: Is there parking?", answer: "A: Yes." },
            ]
        );
        assert!(!only_grants_leave("User: Can my kids visit?", "Bot: Sure! Only on weekends."));
    }

    #[test]
    fn other_answers_stand_alone() {
        let refused = "A: No, our office staff speak Spanish, Tagalog and Vietnamese as well.";
        assert!(answer_stands_alone("Q: Do I need to speak English?", refused));
        let described = "A: It has three bedrooms, a fenced yard and a park across the road.";
        assert!(answer_stands_alone("Q: Is it good for kids?", described));
        let leave = "A: Yes, the pool is open to all residents and their guests until 9 pm.";
        assert!(answer_stands_alone("Q: Can kids use the pool?", leave));
        let welcomed = "A: No problem, service dogs are always welcome here.";
        assert!(answer_stands_alone("Q: Can I bring my service dog?", welcomed));
    }

    #[test]
    fn an_answer_that_sets_a_condition_is_read_with_its_question() {
        let asked = "Q: Can I bring my service animal?";
        let conditional = "A: Only if you pay the pet deposit and monthly pet rent like everyone else.";
        assert!(!answer_stands_alone(asked, conditional));
        let plain = "A: Pet deposit and monthly pet rent apply to every cat and dog.";
        assert!(answer_stands_alone(asked, plain));
    }
}
