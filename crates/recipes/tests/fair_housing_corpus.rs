//! The Fair Housing check measured on corpora of listing sentences: `data/fair_housing_dev.tsv`,
//! read while the check's phrase lists were written (the first sixteen held-out corpora joined it
//! once measured), and held-out corpora, each written by someone who had not read the lists or any
//! earlier corpus and measured once when it arrived: `data/fair_housing_holdout.tsv` (the
//! nineteenth), `data/fair_housing_holdout20.tsv`, `data/fair_housing_holdout21.tsv`,
//! `data/fair_housing_holdout22.tsv`, `data/fair_housing_holdout23.tsv`,
//! `data/fair_housing_holdout24.tsv` to `data/fair_housing_holdout63.tsv`. A miss is
//! a flagged sentence that is not flagged, or comes out still naming a protected class (judged by
//! this file's own list of class words, not the check's); a false alarm is a clean sentence that
//! is changed. `data/fair_housing_plain.tsv`, `data/fair_housing_plain2.tsv` and
//! `data/fair_housing_plain3.tsv` (short phrases) are everyday listing prose, all of it to be left
//! alone. The sentence model has learnt from the development corpus, the nineteenth to
//! thirty-sixth corpora and the three everyday sets; the twentieth chose its size.
//! `cargo test -p recipes --test fair_housing_corpus -- --nocapture` prints the figures.

use recipes::listing_kit::fair_housing::{clean, Policy};

/// Each held-out corpus's figures (docs/recipes.md): flagged sentences missed, clean ones
/// changed. Since the sentence model was retrained on the nineteenth to twenty-third corpora, and
/// the rules' false alarms on names and qualified places were read off the twenty-first and
/// twenty-second, these five are in sample; their one-run figures, with the rules alone in
/// brackets, were: the nineteenth 22 and 6 (rules only), the twentieth 4 and 10 (17 and 9), the
/// twenty-first 2 and 10 (7 and 9), the twenty-second 1 and 12 (5 and 11), the twenty-third 5 and
/// 8 (8 and 7).
const MAX_MISSES: usize = 1;
const MAX_FALSE_ALARMS: usize = 3;
const MAX_MISSES_20: usize = 0;
const MAX_FALSE_ALARMS_20: usize = 4;
const MAX_MISSES_21: usize = 0;
const MAX_FALSE_ALARMS_21: usize = 2;
const MAX_MISSES_22: usize = 0;
const MAX_FALSE_ALARMS_22: usize = 0;
const MAX_MISSES_23: usize = 0;
const MAX_FALSE_ALARMS_23: usize = 5;
/// The twenty-fourth corpus's figures on its one run were 15 and 6 (the rules alone: 26 and 4),
/// its writer asked to state at least half the preferences without a class word. The twenty-fifth,
/// asked the same, was measured once on arrival (15 and 2; rules alone 35 and 2). The rules for
/// preferences told by practice, birth year, title, ability and what children bring were then
/// written from the misses of both, so both are in sample now.
const MAX_MISSES_24: usize = 0;
const MAX_FALSE_ALARMS_24: usize = 1;
const MAX_MISSES_25: usize = 0;
const MAX_FALSE_ALARMS_25: usize = 0;
/// The twenty-sixth corpus, written in classified-ad voices alongside the twenty-fifth: 12 and 3
/// (rules alone 36 and 1) on arrival, before the rules above; 7 and 3 (rules alone 30 and 1) on
/// its one run after them. The false alarms read off the twenty-fourth's clean half since (a
/// possessive naming a garden or a room, a faith's festival, the sellers' grandparents) took one
/// of its three.
const MAX_MISSES_26: usize = 0;
const MAX_FALSE_ALARMS_26: usize = 0;
/// The twenty-seventh corpus, written after all of the above (at least 70 preferences without a
/// class word, in many voices): 18 and 1 (rules alone 40 and 0) on its one run; the check as it
/// was before the rules for practice and the rest gives 21 and 2 (44 and 1) on it. Its misses were
/// then read (covenants honoured, harmony with a heritage, names easy to say, other countries'
/// papers, a faith's objects refused, assistance animals counted as pets, pensions, "if you're
/// expecting" ...), so it is in sample now. The model's retraining on the thirty-second to
/// thirty-sixth corpora moved it from 2 and 0 to 1 and 1 (a leasing post's hashtags dropped);
/// reading hashtags as their words took it back to 1 and 0.
const MAX_MISSES_27: usize = 1;
const MAX_FALSE_ALARMS_27: usize = 0;
/// The twenty-eighth corpus, written after the twenty-seventh's misses were read (at least 70
/// preferences without a class word, screening criteria, texts and captions): 13 and 4 (rules
/// alone 27 and 1) on its one run; the check as it was before this round gives 14 and 5 (34 and
/// 2) on it. The model has since learnt the twenty-fourth to twenty-eighth, so all five are in
/// sample.
const MAX_MISSES_28: usize = 0;
const MAX_FALSE_ALARMS_28: usize = 0;
/// The twenty-ninth corpus, written after the model was retrained (at least 70 preferences
/// without a class word, told through everyday life): 25 and 4 (rules alone 47 and 2) on its one
/// run; the check before the retraining gives 27 and 6, the check as it stood at the start of
/// this round of work 31 and 7 (54 and 3).
const MAX_MISSES_29: usize = 0;
const MAX_FALSE_ALARMS_29: usize = 1;
/// The thirtieth corpus, written after the twenty-ninth's one run (half its preferences without a
/// class word, half in the ways ad writers use class words): 6 and 1 (rules alone 18 and 0) on its
/// one run; the check as it stood at the start of this round of work gives 10 and 1 (23 and 1).
/// The misses of the twenty-ninth and thirtieth were read last (singular subjects and more verbs
/// for the practice rule, transition and presentation, hair, a language asked in, names that
/// sound alike, words of French, Portuguese, Vietnamese and Korean), so both are in sample.
const MAX_MISSES_30: usize = 0;
const MAX_FALSE_ALARMS_30: usize = 0;
/// The thirty-first corpus, written while the sentence model became the whole transformer (at
/// least 70 preferences without a class word): 8 and 2 (rules alone 29 and 2) on its one run with
/// it; the static-vector model gives 9 and 3, the check as it stood at the start of this round 11
/// and 6 (42 and 5). The model has since learnt the twenty-ninth to thirty-first as well, so every
/// corpus here is in sample.
const MAX_MISSES_31: usize = 0;
const MAX_FALSE_ALARMS_31: usize = 2;
/// The thirty-second corpus, written after every earlier one was in sample (at least 75
/// preferences without a class word), and measured once on arrival with the check unchanged:
/// 6 and 6 (rules alone 34 and 5). Its misses and five of its false alarms were then read as
/// families of phrasing (age as a lease rule, by birth year and by schooling; fitting in told by
/// voice, hair or photos; hearing unaided; a household kept small; events, kitchens and an
/// elevator's mode named after a faith or a baby; a converted church; a name after "Father"), so
/// it is in sample. Left: a school's name beside "no rear neighbors", which the model reads.
const MAX_MISSES_32: usize = 0;
const MAX_FALSE_ALARMS_32: usize = 0;
/// The thirty-third corpus (hard negatives weighted: landmarks, street and business names,
/// lawful senior housing), measured once on arrival with the check of the thirty-second's
/// arrival: 1 and 0 (rules alone 3 and 0), out of sample. Its one miss, an occupancy cap below
/// the bedroom count, is a family the thirty-second's round covers, so it is in sample now.
const MAX_MISSES_33: usize = 0;
const MAX_FALSE_ALARMS_33: usize = 0;
/// The thirty-fourth corpus (at least 80 preferences without a class word, at least 60 hard
/// negatives), measured once on arrival with the check of the thirty-third's round: 9 and 10
/// (rules alone 32 and 8), out of sample. Its misses and false alarms were then read as families
/// (an assistance animal refused or counted under a pet rule, a modification refused, medications
/// asked for, a restroom matched to a birth certificate, a no-under-fives policy, children's
/// games, hairstyles banned; a business named with a class word, the sellers' own family, income
/// from any lawful source, "Our Lady of Peace"), so it is in sample. Left: a preference told by a
/// pronoun ("buyers who won't be needing one", a stroller), three sentences the model drops, a
/// named cathedral given as a landmark (rewritten by design), a retired couple who owned it, and
/// income "from any lawful source, including ... disability benefits ... child support": words
/// that would excuse it there would excuse a preference beside them in the same sentence.
const MAX_MISSES_34: usize = 1;
const MAX_FALSE_ALARMS_34: usize = 2;
/// The thirty-fifth corpus (a spread over every class, at least 65 hard negatives), measured once
/// on arrival with the check of the thirty-fourth's round: 5 and 3 (rules alone 15 and 3), out of
/// sample. Its round (an applicant asked their age or medicines, minors capped by number, voucher
/// holders sent elsewhere, one faith's holiday alone; a craft named after the Amish, the sellers
/// described as retired) leaves two the sentence model drops: "The handcrafted Amish dining set"
/// and a Buddhist temple's garden next door. The thirty-fourth's retired couple went with it.
const MAX_MISSES_35: usize = 0;
const MAX_FALSE_ALARMS_35: usize = 1;
/// The thirty-sixth corpus (every class, about half its clean sentences hard negatives), measured
/// once on arrival with the check of the thirty-fifth's round: 0 and 3 (rules alone 8 and 2), out
/// of sample, and left as it came: "man cave" rewritten to "bonus room" and a church given as a
/// draw (its festival) dropped are the check's policy; the sentence model drops "Sellers are
/// motivated and have already found their next home". Its round gave the rules four families the
/// model alone had read (rules alone now 2 and 2 on it); the check's figures did not move.
const MAX_MISSES_36: usize = 0;
const MAX_FALSE_ALARMS_36: usize = 2;
/// The thirty-seventh corpus (every class, about two thirds of its clean sentences hard
/// negatives), measured on arrival with the check of the thirty-sixth's round: 2 and 1 (rules
/// alone 12 and 1), out of sample, and 2 and 1 again with the sentence model retrained on the
/// thirty-second to thirty-sixth corpora and a third everyday set (without this one). Its misses
/// ("people just like you" offered by agents, "NO BOYS ALLOWED" read as a name after "BACHELORETTE
/// PAD" is rewritten) were then made rules, so it is in sample; the one false alarm is a mosque
/// given as a landmark, which the check rewrites by design.
const MAX_MISSES_37: usize = 0;
const MAX_FALSE_ALARMS_37: usize = 1;
/// The thirty-eighth corpus (every class; hashtags, capitals, fragments), measured on arrival: 2
/// and 4 (rules alone 8 and 3), and the same after the thirty-seventh's round, out of sample.
/// Missed: "#lightskinonly", "#nowalkers". Changed: a chapel and a "bachelor studio" dropped by
/// the rules, "No more than two vehicles per household." dropped by the model, a mosque given as
/// a landmark rewritten by design. Its round (hashtags read as their words, a chapel among the
/// amenities, "bachelor studio" a unit type) took it to 0 and 2 (rules alone 5 and 1).
const MAX_MISSES_38: usize = 0;
const MAX_FALSE_ALARMS_38: usize = 2;
/// The thirty-ninth corpus (every class; hashtags, capitals, shorthand, fragments; hard clean
/// near-misses), measured on arrival, after the thirty-eighth's round: 4 and 2 (rules alone 19
/// and 2; the check before that round: 4 and 2, rules alone 21 and 2). Its own round (worship
/// told by the pew, "far from the barrio", a photo asked with every application, "Englsh", a
/// chapel among the amenities, and their kin) took it to 0 and 1 (rules alone 6 and 1).
const MAX_MISSES_39: usize = 0;
const MAX_FALSE_ALARMS_39: usize = 1;
/// The fortieth corpus (every class, at least 60 preferences without a class word; texts,
/// managers' emails, agents' remarks, screening items), measured on arrival after the
/// thirty-ninth's round: 7 and 2 (rules alone 26 and 2). Its round (a couple probed, a graduation
/// year asked, observances and a faith's objects refused, a client steered to where "they'll be
/// more comfortable", an assistance animal charged as a pet) took it to 0 and 2; both changes left
/// are rewrites by design (a temple as a landmark, "man cave").
const MAX_MISSES_40: usize = 0;
const MAX_FALSE_ALARMS_40: usize = 2;
/// The forty-first corpus (every class, at least 60 preferences told by house rules, lease
/// clauses, application questions, differing terms and agents' notes), measured on arrival after
/// the fortieth's round and the review's narrowing of its rules: 17 and 2 (rules alone 44 and 2).
/// Nine of its misses then made rules (a building's "profile", a photo of the applicant, other
/// holidays' displays refused, oxygen users, expecting applicants sent elsewhere, "so-called"
/// comfort animals, disability income refused, evacuating unaided, fasting months): 8 and 2
/// (rules alone 35 and 2); seven more (a bedroom shared by one sex, minors kept from common
/// areas, a scroll on the door frame, a deposit for wheels, drivers no longer, listings shown to
/// some families only, retirement plans asked): 1 and 2 (rules alone 28 and 2).
/// After the forty-second's round (agents' languages): 1 and 1.
const MAX_MISSES_41: usize = 1;
const MAX_FALSE_ALARMS_41: usize = 1;
/// The forty-second corpus (every class in MLS remarks, rental ads, captions with run-together
/// tags, lease clauses and texts; shorthand and other languages), measured on arrival after the
/// forty-first's rounds and three fixes from a review: 2 and 6 (rules alone 13 and 6). Its round
/// (French and Spanish class words, "everyone's welcome", church bells, an agent's Mandarin, a
/// roommate of one sex sought to share the writer's home): 0 and 3 (rules alone 11 and 3); of
/// the three, "Temple Beth El" as a landmark and "man cave" are rewrites by design.
const MAX_MISSES_42: usize = 0;
const MAX_FALSE_ALARMS_42: usize = 3;
/// The forty-third corpus (every class in managers' emails, handbooks, HOA notices, texts,
/// marketplace and co-living posts; fifteen languages), measured on arrival after the
/// forty-second's round and a slip read inside a one-case tag: 11 and 10 (rules alone 19 and 5).
/// Its round (forms only in English, birthplace asked, guide dogs kept to the lobby, an ESA's own
/// fee, a condition to describe, a faith's displays banned, Haitian Creole, Somali, Amharic and
/// Korean class words, a roommate of one sex sought for the writer's own home,
/// "LGBTQ+-owned", "we welcome everyone", a lone tag or abbreviation not read by the model):
/// 0 and 5 (rules alone 0 and 2); of the five, three are the model's and two rewrites by design.
const MAX_MISSES_43: usize = 0;
const MAX_FALSE_ALARMS_43: usize = 4;
/// The forty-fourth corpus (holiday-rental house rules, managers' templates, agents' captions,
/// transcribed video tours, student, senior and sublet ads, development copy; fifteen languages),
/// measured on arrival after the forty-third's round: 17 and 10 (rules alone 42 and 6). Its round
/// (a booking party's or guest's age, infants counted from birth, a household's make-up or growth
/// screened, residents with children housed apart, help refused, modifications refused by name,
/// a shared heritage, neighbours described by age, Ukrainian, Punjabi, Farsi, German and Spanish
/// words; the writer's own family and history not read by the model; a rewrite the model still
/// reads as a preference dropped): 0 and 5 (rules alone 8 and 2; 9 and 2 after a review
/// narrowed the new rules). The forty-fifth's round reads "FAQ: Are children allowed? A: Yes, ..."
/// as a question answered: 0 and 4.
const MAX_MISSES_44: usize = 0;
const MAX_FALSE_ALARMS_44: usize = 4;
/// The forty-fifth corpus (managers' texts and voicemails, HOA, park and co-living rules, FAQs and
/// chatbots, landlords' forums, New Zealand, South African, Kenyan, Singaporean, Scottish, Welsh
/// and Philippine ads; nineteen languages), measured on arrival after the forty-fourth's round:
/// 8 and 24 (rules alone 23 and 18), 9 of the 24 a reader's question read as the writer's. Its
/// round (questions and answers read as such, a fixture or an assistance animal refused in an
/// answer, a parking space near the door refused, "on the younger side", more peoples and faiths,
/// immigration papers pending, Hebrew, Dutch, Polish, Italian and Hindi words; a roommate sought
/// for a sublet, demographics declined, senior living, help offered on request): 0 and 9 (rules
/// alone 12 and 6); of the nine, five name a place of worship, three the model reads, and one is an
/// open house's "bring the whole family".
const MAX_MISSES_45: usize = 0;
const MAX_FALSE_ALARMS_45: usize = 7;
/// The forty-sixth corpus (property managers' templates and auto-replies, chatbot transcripts,
/// captions and reel scripts, student, senior, corporate and military housing, co-op notices,
/// ads from eleven countries; twenty languages), measured on arrival after the forty-fifth's
/// round: 5 and 11 (rules alone 14 and 5). Its round (Greek and Turkish class words, Hebrew's
/// Jewish and Sabbath-observing in the feminine, a title after a "headline:" label read as a
/// title, a service animal allowed only with a pet deposit; a chat's "User:" and "Bot:" read as a
/// question and its answer, a bare assent to leave asked not read, a roommate ad's setting read
/// by its questions' answers, staff caregivers, a parent guarantor, a Polish home adapted for
/// disabilities, Japanese assistance dogs allowed, Spanish housing for older persons): 0 and 5
/// (rules alone 9 and 0), all five the model's; 0 and 6 after its review (staff caregivers are
/// excused without keeping the model from reading their sentence, which it then drops).
const MAX_MISSES_46: usize = 0;
const MAX_FALSE_ALARMS_46: usize = 6;
/// The forty-seventh (MLS remarks, classifieds, WhatsApp posts, texts, voicemails, house rules,
/// FAQs and captions, roommate ads by writers who do and do not live there, twenty-five
/// languages), measured on arrival after the forty-sixth's round: 5 and 15 (rules alone 12 and
/// 13). Its round (sellers, builders and former owners described; a gurdwara, a mandir and a
/// Russian church as places; fittings for a hearing loss; similar cultural backgrounds; an extra
/// deposit on a service dog; Swedish and Czech; a writer who does not live in the home): 0 and 7
/// (rules alone 7 and 5); 0 and 9 after its review (rules alone 7 and 7), which withdrew the
/// Japanese "whatever the nationality" and "level access" as excuses that also hid refusals.
const MAX_MISSES_47: usize = 0;
const MAX_FALSE_ALARMS_47: usize = 8;
/// The forty-eighth (subtler wording asked for: "no little feet", "mature professional", a
/// doctor's note naming the diagnosis, code words; ten languages), measured on arrival after the
/// forty-seventh's round: 2 and 4 (rules alone 13 and 2). Its round (a diagnosis asked to be
/// stated; a landlord or an owner described after an article, in a text that states no wish; a
/// sentence whose faith was rewritten dropped when it names a place of worship beside it): 0 and
/// 3 (rules alone 12 and 1). Left: "Who needs a car?" and "NO EXCEPTIONS." after a smoking rule,
/// both the model's, and "the Buddhist temple" (a place named by its faith is a draw, by policy).
const MAX_MISSES_48: usize = 0;
const MAX_FALSE_ALARMS_48: usize = 3;
/// The forty-ninth (direct and indirect preferences in many voices, source-of-income refusals
/// written as clean), measured on arrival after the forty-eighth's round: 0 and 3 (rules alone 3
/// not flagged and 3). Its round (an occupancy cap counted per bedroom; a citizen required;
/// assistance animals not accepted, or counted as pets): 0 and 2 (rules alone 2 and 2). Left, both by policy: a
/// Section 8 refusal (a refused income source codes for a class and is unlawful in many states)
/// and "the Greek Orthodox cathedral" (a place named by its faith).
const MAX_MISSES_49: usize = 0;
const MAX_FALSE_ALARMS_49: usize = 2;
/// The fiftieth (at least 80 of its preferences without a class word: routines and pastimes,
/// things worn and carried, steering to another building, screening questions; owner-occupied
/// shared housing written as clean), measured on arrival after the forty-ninth's round: 17 and 8
/// (rules alone 41 not flagged and 6). Its round: 1 and 2 (rules alone 25 and 0).
const MAX_MISSES_50: usize = 1;
const MAX_FALSE_ALARMS_50: usize = 2;
/// The fifty-first (about sixteen preferences per class, at least 80 without a class word; chatbot
/// transcripts, voicemails, five other languages), measured on arrival after the fiftieth's round:
/// 9 and 10 (rules alone 29 not flagged and 10). Its round: 1 and 3 (rules alone 22 and 2); the
/// miss is a voicemail whose inquiry is dropped and whose "The owner's a little particular." is
/// kept, "little" being on this file's list of class words.
const MAX_MISSES_51: usize = 1;
const MAX_FALSE_ALARMS_51: usize = 3;
/// The fifty-second (captions and posts of one to three sentences, the preference often after
/// ordinary description; at least 70 without a class word; six other languages), measured on
/// arrival after the fifty-first's round: 6 and 15 (rules alone 37 not flagged and 10). Its round:
/// 1 and 7 (rules alone 32 and 1), six of the false alarms the model's; the miss is "Sweet little
/// studio above the bakery.", kept after its refusal is dropped, "little" being on this file's list.
const MAX_MISSES_52: usize = 1;
const MAX_FALSE_ALARMS_52: usize = 6;
/// The fifty-third (at least 70 preferences without a class word, about fifteen per class,
/// harassment among them; voicemails, chatbot answers, HOA rules and ten other languages),
/// measured on arrival after the fifty-second's round: 12 and 16 (rules alone 30 not flagged and
/// 11). Its round: 0 and 14 (rules alone 18 and 9); the false alarms left are places and festivals
/// named by their faith (by policy), the model's readings and descriptions of people that state no
/// wish (a leasing agent who is "a mother of two", the sellers' "aging parents").
const MAX_MISSES_53: usize = 0;
const MAX_FALSE_ALARMS_53: usize = 13;
/// The fifty-fourth (about fifteen preferences per class, most indirect: steering by who would
/// "blend in", looks wanted, assistance animals charged as pets; Korean, Tagalog, Spanish and
/// German), measured on arrival after the fifty-third's round: 8 and 12 (rules alone 19 not
/// flagged and 11). Its round: 0 and 2, the two left being places of worship named as landmarks
/// (by policy).
const MAX_MISSES_54: usize = 0;
const MAX_FALSE_ALARMS_54: usize = 2;
/// The fifty-fifth (at least 60 preferences without a class word: worship told by pews and grace,
/// pregnancy by a figure of speech, children as "little visitors", a homeland; about 15 in other
/// languages), measured on arrival after the fifty-fourth's round: 8 and 8 (rules alone 26 not
/// flagged and 6). Its round: 0 and 1, the one left a Hebrew school named as a landmark (by
/// policy).
const MAX_MISSES_55: usize = 0;
const MAX_FALSE_ALARMS_55: usize = 1;
/// The fifty-sixth (blunt and coded preferences, a problem hidden mid-listing in about a third;
/// 16 of each verdict in eleven other languages; clean near-misses on accessibility, landmarks,
/// older-persons housing, fair-housing statements and the sellers' story), measured on arrival
/// after the fifty-fifth's round: 0 and 13 (rules alone 3 not flagged and 8). Its round: 0 and 3,
/// the three left a mosque named as a landmark (by policy), a Korean sentence naming a market
/// and a church nearby (the model), and residents listed as students, families and retirees.
const MAX_MISSES_56: usize = 0;
const MAX_FALSE_ALARMS_56: usize = 3;
/// The fifty-seventh (at least half the preferences without a class word, in landlords', agents'
/// and roommates' voices; about a tenth in Spanish, Portuguese, French, Chinese, Korean and
/// Vietnamese; clean near-misses on landmarks, room names, accessible features and lawful
/// older-persons housing), measured once on arrival after the fifty-sixth's round: 1 and 5 (rules
/// alone 11 not flagged and 4). The miss: tenants made to certify they are HIV-negative. The false
/// alarms: a mosque and a temple named as landmarks (by policy), a "man cave" (by policy), the
/// previous owners who "kept kosher", and a plain Korean listing (the model).
const MAX_MISSES_57: usize = 0;
const MAX_FALSE_ALARMS_57: usize = 4;
/// The fifty-eighth (about two thirds of the preferences without a class word: euphemisms, emoji,
/// slang, second-hand reports; a third hidden mid-listing; about a tenth in Spanish, Tagalog,
/// Polish, Arabic, Hindi, Italian, Japanese, Russian and Vietnamese; clean near-misses on room
/// names, landmarks, lawful older-persons housing and roommate ads, agents' names and the
/// sellers' story), measured once on arrival after the fifty-seventh's round: 5 and 13 (rules
/// alone 29 not flagged and 11). Its round: 0 and 4, the four left a church named as a landmark
/// (by policy), room "for a growing household" and a home "good for a couple, a family or
/// roommates" (household kinds named, by policy), and an Italian listing near Little Italy (the
/// model).
const MAX_MISSES_58: usize = 0;
const MAX_FALSE_ALARMS_58: usize = 4;
/// The fifty-ninth (about two thirds of the preferences without a class word, in landlords',
/// agents', managers', sellers', roommates', co-op boards' and HOAs' voices; one of each verdict
/// in each of twelve other languages; clean near-misses on room names, landmarks, lawful
/// older-persons housing and roommate ads, lawful screening and names), measured once on arrival
/// after the fifty-eighth's round: 10 and 13 (rules alone 39 not flagged and 10). A first part of
/// its round (misses only): 5 and 13; the rest: 0 and 6 (rules alone 29 and 4), the six four
/// places of worship named as landmarks and two "man cave"s (policy).
const MAX_MISSES_59: usize = 0;
const MAX_FALSE_ALARMS_59: usize = 6;
/// The sixtieth (about two thirds of the preferences without a class word, in euphemisms,
/// pastimes as proxies, price incentives, applicants' questions and coded descriptions; about a
/// tenth in twelve other languages; clean near-misses on room names, accessibility offered,
/// assistance animals let in, lawful older-persons housing and roommate ads), measured once on
/// arrival after the fifty-ninth's round: 4 and 5 (rules alone 19 not flagged and 4). Its round:
/// 0 and 2 (rules alone 15 and 2), an unlabelled question about an assistance animal's charge
/// (the rules) and a "man cave" (policy).
const MAX_MISSES_60: usize = 0;
const MAX_FALSE_ALARMS_60: usize = 2;
/// The sixty-first corpus, written like the sixtieth: 4 misses and 8 false alarms (rules alone
/// 19 and 7) on arrival; the round after it (a Polish preference for white tenants, Spanish
/// assistance dogs refused, "has a guide dog ...? A: Sorry") left 1 and 8 (16 and 7); the
/// sixty-second's round read its last miss, a reader's remark between question and answer: 0.
const MAX_MISSES_61: usize = 0;
const MAX_FALSE_ALARMS_61: usize = 8;
/// The sixty-second corpus, written like the sixtieth: 9 misses and 14 false alarms (rules alone
/// 20 and 11) on arrival, several of them lawful answers dropped whole ("Q: I'm pregnant - will
/// that affect my application? A: No. Every applicant is evaluated on the same criteria."). Its
/// round left 1 and 8 (rules alone 12 and 6).
const MAX_MISSES_62: usize = 1;
const MAX_FALSE_ALARMS_62: usize = 8;
/// The sixty-third corpus, written like the sixtieth and measured once on arrival after the
/// sixty-second's round: 7 misses and 13 false alarms (rules alone 26 and 11). Its round left 4
/// and 12 (rules alone 23 and 10).
const MAX_MISSES_63: usize = 4;
const MAX_FALSE_ALARMS_63: usize = 12;
/// Everyday listing sentences changed. The rules alone change none of any set; the model
/// changed 3 of the first and 2 of the second on their one runs, has learnt them since, and
/// leaves them alone.
const MAX_FALSE_ALARMS_PLAIN: usize = 0;
const MAX_FALSE_ALARMS_PLAIN_2: usize = 0;
/// Short everyday phrases (headlines, captions, bullet points): 2 of 200 changed on their one run
/// ("Desirable neighborhood.", "Established neighborhood."), by the model before and after its
/// retraining on the thirty-second to thirty-sixth corpora; it has learnt them since.
const MAX_FALSE_ALARMS_PLAIN_3: usize = 0;

/// Words that name a protected class of people (or code for one), as this evaluation judges a
/// rewrite; written for the judging, apart from the check's phrase list. ("Parish" is not one: in
/// Louisiana it is the county, and a parish school is a landmark once the preference is gone.)
const CLASS_WORDS: &[&str] = &[
    "kid",
    "kids",
    "child",
    "children",
    "little",
    "toddler",
    "toddlers",
    "teen",
    "teens",
    "teenager",
    "teenagers",
    "baby",
    "newlywed",
    "newlyweds",
    "couple",
    "couples",
    "families",
    "grandkids",
    "grandparents",
    "mom",
    "moms",
    "dad",
    "dads",
    "nanny",
    "mature",
    "seniors",
    "retirees",
    "retired",
    "elderly",
    "folks",
    "over-55",
    "nesters",
    "empty-nesters",
    "church",
    "churches",
    "catholic",
    "synagogue",
    "kosher",
    "mosque",
    "islamic",
    "christian",
    "baptist",
    "jewish",
    "churchgoers",
    "muslim",
    "wheelchair",
    "wheelchair-bound",
    "handicapped",
    "disabilities",
    "mentally",
    "climb",
    "blind",
    "deaf",
    "healthy",
    "white",
    "hispanic",
    "asian",
    "korean",
    "polish",
    "italian",
    "irish",
    "english",
    "english-speaking",
    "foreigners",
    "immigrants",
    "gentleman",
    "gentlemen",
    "woman",
    "women",
    "girl",
    "lady",
    "ladies",
    "guy",
    "male",
    "bachelor",
    "man",
    "exclusive",
    "safe",
    "like-minded",
    "adults",
    "adult",
    "person",
    "persons",
    "people",
    "father",
    "fathers",
    "mother",
    "mothers",
    "parent",
    "parents",
    "pregnant",
    "expecting",
    "husband",
    "wife",
    "spouse",
    "senior",
    "golden",
    "citizen",
    "citizens",
    "citizenship",
    "visa",
    "immigrant",
    "black",
    "latino",
    "latinos",
    "hindu",
    "sikh",
    "buddhist",
    "mormon",
    "faith",
    "devout",
    "disabled",
    "disability",
    "mobility",
    "sober",
    "addicts",
    "boy",
    "boys",
    "girls",
    "guys",
    "female",
    "females",
    "males",
    "men",
    "section",
    // Added with the seventh held-out corpus, before its run.
    "shul",
    "shabbat",
    "playdates",
    "dependents",
    "latter-day",
    "saint",
    "jehovah",
    "witnesses",
    "pastor",
    "american-born",
    "twentysomethings",
    "newcomers",
    "overseas",
    "retirement",
    "descent",
    "speakers",
    "able-bodied",
    "caregiver",
    "aide",
    "transgender",
    "hearing-impaired",
    "homogeneous",
    "demographic",
    "millennials",
    "grads",
    "walker",
    "cane",
    "scooter",
    "oxygen",
    "sober",
    "recovery",
    "non-believers",
    "atheists",
    "church-going",
    "worship",
    "accent",
    "headscarves",
    "turbans",
    "international",
    "nesters",
    "ethnic",
    "non-english",
    "diversity",
    "god-fearing",
    "beliefs",
    "all-american",
    "caucasian",
    "singles",
    "urban",
    "light-skinned",
    "grown-ups",
    "youthful",
    "younger",
    "older",
    "teenagers",
    "babies",
    "child-free",
    "mass",
    // Added with the eighth held-out corpus, before its run.
    "muslims",
    "refugees",
    "caucasian",
    "custody",
    "nesters",
    "orthodox",
    "sabbath",
    "congregation",
    "fellowship-centered",
    "believer",
    "nonbelievers",
    "hymns",
    "old-stock",
    "americans",
    "wives",
    "dependents",
    "toddlers",
    "menorahs",
    "dialysis",
    "scooters",
    "tty",
    "placards",
    "caregiver",
    "addiction",
    "busing",
    "integration",
    "fair-complexioned",
    "millennial",
    "boomers",
    "methadone",
    "ramadan",
    "gujarati",
    "heritage",
    "transgender",
    "korean-speaking",
    "unaccented",
    "minority",
    "teenagers",
    "hoodie",
    "undocumented",
    "lds",
    "expectant",
    "ladies",
    "elderly",
    // Added with the ninth held-out corpus, before its run.
    "gals",
    "mixed-gender",
    "diapers",
    "complexion",
    "unmarried",
    "mandarin",
    "wheelchairs",
    "desi",
    "widow",
    "spinster",
    "rehab",
    "mental",
    "illness",
    "twenties",
    "hindi",
    "chinese",
    "young",
    "twenty-somethings",
    "minors",
    "married",
    "gay-friendly",
    "heterosexual",
    "foster",
    "man's",
    "korean-american",
    "diagnoses",
    "medications",
    "non-jewish",
    "observant",
    "psychiatric",
    "lesbian",
    "queer",
    "seminary",
    "bible",
    "hispana",
    "familia",
    "school-age",
];

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '-')
        .filter(|w| !w.is_empty())
        .map(|w| w.trim_end_matches("'s").trim_end_matches('\'').to_lowercase())
        .collect()
}

/// A class word left in a cleaned flagged sentence, if any (the property words that contain
/// one, "family room" and "single-family", do not count).
fn class_word_left(cleaned: &str) -> Option<String> {
    let lowered = cleaned.to_lowercase().replace("family room", "").replace("single-family", "");
    words(&lowered).into_iter().find(|w| CLASS_WORDS.contains(&w.as_str()))
}

struct Figures {
    flagged: usize,
    misses: Vec<String>,
    clean: usize,
    false_alarms: Vec<String>,
}

fn evaluate(name: &str, corpus: &str, policy: Policy) -> Figures {
    let mut figures = Figures { flagged: 0, misses: Vec::new(), clean: 0, false_alarms: Vec::new() };
    for line in corpus.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let (verdict, sentence) = line.split_once('\t').expect("verdict<TAB>sentence");
        let mut findings = Vec::new();
        let cleaned = clean(sentence, "details.description", policy, &mut findings);
        match verdict {
            "flag" => {
                figures.flagged += 1;
                let left = class_word_left(&cleaned);
                if findings.is_empty() || left.is_some() {
                    let why = left.map_or_else(|| "not flagged".to_string(), |w| format!("{w:?} left"));
                    figures.misses.push(format!("{sentence:?} -> {cleaned:?} ({why})"));
                }
            }
            "clean" => {
                figures.clean += 1;
                if !findings.is_empty() || cleaned != sentence {
                    figures.false_alarms.push(format!("{sentence:?} -> {cleaned:?}"));
                }
            }
            other => panic!("unknown verdict {other:?}"),
        }
    }
    println!(
        "fair-housing {name}: {} flagged sentences, {} missed; {} clean sentences, {} false alarms",
        figures.flagged,
        figures.misses.len(),
        figures.clean,
        figures.false_alarms.len()
    );
    for miss in &figures.misses {
        println!("  miss: {miss}");
    }
    for alarm in &figures.false_alarms {
        println!("  false alarm: {alarm}");
    }
    figures
}

#[test]
fn the_development_corpus_is_cleaned_without_a_miss() {
    let corpus = include_str!("data/fair_housing_dev.tsv");
    // The rules alone, and with the sentence model (trained on this corpus, so this is in sample).
    for policy in [Policy::RULES_ONLY, Policy::default()] {
        let figures = evaluate("development corpus", corpus, policy);
        assert!(figures.flagged >= 50 && figures.clean >= 50, "the corpus keeps its size");
        assert!(figures.misses.is_empty(), "{:?}", figures.misses);
        assert!(figures.false_alarms.is_empty(), "{:?}", figures.false_alarms);
    }
}

/// Measures a held-out corpus by the rules alone (printed) and by the whole check, which may miss
/// and alarm no more than on its recorded run (docs/recipes.md). A change that does worse is a
/// regression; one that does better was tuned on the corpus, which then needs a successor.
/// Returns what went over, if anything, so that one run prints every corpus's figures.
fn measure_held_out(name: &str, corpus: &str, max_misses: usize, max_false_alarms: usize) -> Option<String> {
    evaluate(&format!("{name}, rules alone"), corpus, Policy::RULES_ONLY);
    let figures = evaluate(name, corpus, Policy::default());
    assert!(figures.flagged >= 109 && figures.clean >= 109, "the corpus keeps its size");
    (figures.misses.len() > max_misses || figures.false_alarms.len() > max_false_alarms)
        .then(|| format!("{name}: misses {:?}, false alarms {:?}", figures.misses, figures.false_alarms))
}

/// The held-out corpora, each with the misses and false alarms of its recorded run. The model's
/// retraining on the thirty-second to thirty-sixth corpora (2026-12-02) lowered some: misses of
/// the nineteenth 3 to 1, the twenty-eighth 1 to 0, the twenty-ninth 2 to 1; false alarms of the
/// thirty-second 1 to 0, the thirty-fourth 5 to 2, the thirty-fifth 2 to 1, the thirty-sixth 3 to
/// 2 (the sellers' "next home" is no longer dropped); see docs/recipes.md.
const HELD_OUT: &[(&str, &str, usize, usize)] = &[
    ("held-out corpus", include_str!("data/fair_housing_holdout.tsv"), MAX_MISSES, MAX_FALSE_ALARMS),
    ("twentieth corpus", include_str!("data/fair_housing_holdout20.tsv"), MAX_MISSES_20, MAX_FALSE_ALARMS_20),
    ("twenty-first corpus", include_str!("data/fair_housing_holdout21.tsv"), MAX_MISSES_21, MAX_FALSE_ALARMS_21),
    ("twenty-second corpus", include_str!("data/fair_housing_holdout22.tsv"), MAX_MISSES_22, MAX_FALSE_ALARMS_22),
    ("twenty-third corpus", include_str!("data/fair_housing_holdout23.tsv"), MAX_MISSES_23, MAX_FALSE_ALARMS_23),
    ("twenty-fourth corpus", include_str!("data/fair_housing_holdout24.tsv"), MAX_MISSES_24, MAX_FALSE_ALARMS_24),
    ("twenty-fifth corpus", include_str!("data/fair_housing_holdout25.tsv"), MAX_MISSES_25, MAX_FALSE_ALARMS_25),
    ("twenty-sixth corpus", include_str!("data/fair_housing_holdout26.tsv"), MAX_MISSES_26, MAX_FALSE_ALARMS_26),
    ("twenty-seventh corpus", include_str!("data/fair_housing_holdout27.tsv"), MAX_MISSES_27, MAX_FALSE_ALARMS_27),
    ("twenty-eighth corpus", include_str!("data/fair_housing_holdout28.tsv"), MAX_MISSES_28, MAX_FALSE_ALARMS_28),
    ("twenty-ninth corpus", include_str!("data/fair_housing_holdout29.tsv"), MAX_MISSES_29, MAX_FALSE_ALARMS_29),
    ("thirtieth corpus", include_str!("data/fair_housing_holdout30.tsv"), MAX_MISSES_30, MAX_FALSE_ALARMS_30),
    ("thirty-first corpus", include_str!("data/fair_housing_holdout31.tsv"), MAX_MISSES_31, MAX_FALSE_ALARMS_31),
    ("thirty-second corpus", include_str!("data/fair_housing_holdout32.tsv"), MAX_MISSES_32, MAX_FALSE_ALARMS_32),
    ("thirty-third corpus", include_str!("data/fair_housing_holdout33.tsv"), MAX_MISSES_33, MAX_FALSE_ALARMS_33),
    ("thirty-fourth corpus", include_str!("data/fair_housing_holdout34.tsv"), MAX_MISSES_34, MAX_FALSE_ALARMS_34),
    ("thirty-fifth corpus", include_str!("data/fair_housing_holdout35.tsv"), MAX_MISSES_35, MAX_FALSE_ALARMS_35),
    ("thirty-sixth corpus", include_str!("data/fair_housing_holdout36.tsv"), MAX_MISSES_36, MAX_FALSE_ALARMS_36),
    ("thirty-seventh corpus", include_str!("data/fair_housing_holdout37.tsv"), MAX_MISSES_37, MAX_FALSE_ALARMS_37),
    ("thirty-eighth corpus", include_str!("data/fair_housing_holdout38.tsv"), MAX_MISSES_38, MAX_FALSE_ALARMS_38),
    ("thirty-ninth corpus", include_str!("data/fair_housing_holdout39.tsv"), MAX_MISSES_39, MAX_FALSE_ALARMS_39),
    ("fortieth corpus", include_str!("data/fair_housing_holdout40.tsv"), MAX_MISSES_40, MAX_FALSE_ALARMS_40),
    ("forty-first corpus", include_str!("data/fair_housing_holdout41.tsv"), MAX_MISSES_41, MAX_FALSE_ALARMS_41),
    ("forty-second corpus", include_str!("data/fair_housing_holdout42.tsv"), MAX_MISSES_42, MAX_FALSE_ALARMS_42),
    ("forty-third corpus", include_str!("data/fair_housing_holdout43.tsv"), MAX_MISSES_43, MAX_FALSE_ALARMS_43),
    ("forty-fourth corpus", include_str!("data/fair_housing_holdout44.tsv"), MAX_MISSES_44, MAX_FALSE_ALARMS_44),
    ("forty-fifth corpus", include_str!("data/fair_housing_holdout45.tsv"), MAX_MISSES_45, MAX_FALSE_ALARMS_45),
    ("forty-sixth corpus", include_str!("data/fair_housing_holdout46.tsv"), MAX_MISSES_46, MAX_FALSE_ALARMS_46),
    ("forty-seventh corpus", include_str!("data/fair_housing_holdout47.tsv"), MAX_MISSES_47, MAX_FALSE_ALARMS_47),
    ("forty-eighth corpus", include_str!("data/fair_housing_holdout48.tsv"), MAX_MISSES_48, MAX_FALSE_ALARMS_48),
    ("forty-ninth corpus", include_str!("data/fair_housing_holdout49.tsv"), MAX_MISSES_49, MAX_FALSE_ALARMS_49),
    ("fiftieth corpus", include_str!("data/fair_housing_holdout50.tsv"), MAX_MISSES_50, MAX_FALSE_ALARMS_50),
    ("fifty-first corpus", include_str!("data/fair_housing_holdout51.tsv"), MAX_MISSES_51, MAX_FALSE_ALARMS_51),
    ("fifty-second corpus", include_str!("data/fair_housing_holdout52.tsv"), MAX_MISSES_52, MAX_FALSE_ALARMS_52),
    ("fifty-third corpus", include_str!("data/fair_housing_holdout53.tsv"), MAX_MISSES_53, MAX_FALSE_ALARMS_53),
    ("fifty-fourth corpus", include_str!("data/fair_housing_holdout54.tsv"), MAX_MISSES_54, MAX_FALSE_ALARMS_54),
    ("fifty-fifth corpus", include_str!("data/fair_housing_holdout55.tsv"), MAX_MISSES_55, MAX_FALSE_ALARMS_55),
    ("fifty-sixth corpus", include_str!("data/fair_housing_holdout56.tsv"), MAX_MISSES_56, MAX_FALSE_ALARMS_56),
    ("fifty-seventh corpus", include_str!("data/fair_housing_holdout57.tsv"), MAX_MISSES_57, MAX_FALSE_ALARMS_57),
    ("fifty-eighth corpus", include_str!("data/fair_housing_holdout58.tsv"), MAX_MISSES_58, MAX_FALSE_ALARMS_58),
    ("fifty-ninth corpus", include_str!("data/fair_housing_holdout59.tsv"), MAX_MISSES_59, MAX_FALSE_ALARMS_59),
    ("sixtieth corpus", include_str!("data/fair_housing_holdout60.tsv"), MAX_MISSES_60, MAX_FALSE_ALARMS_60),
    ("sixty-first corpus", include_str!("data/fair_housing_holdout61.tsv"), MAX_MISSES_61, MAX_FALSE_ALARMS_61),
    ("sixty-second corpus", include_str!("data/fair_housing_holdout62.tsv"), MAX_MISSES_62, MAX_FALSE_ALARMS_62),
    ("sixty-third corpus", include_str!("data/fair_housing_holdout63.tsv"), MAX_MISSES_63, MAX_FALSE_ALARMS_63),
];

#[test]
fn the_held_out_corpora_are_measured() {
    let over: Vec<String> = HELD_OUT
        .iter()
        .filter_map(|&(name, corpus, max_misses, max_false_alarms)| {
            measure_held_out(name, corpus, max_misses, max_false_alarms)
        })
        .collect();
    assert!(over.is_empty(), "{over:#?}");
}

/// Measures a set of everyday listing sentences by the rules alone (printed) and by the whole
/// check, which may change no more than `max_false_alarms` of them.
fn measure_everyday(name: &str, corpus: &str, max_false_alarms: usize) {
    evaluate(&format!("{name}, rules alone"), corpus, Policy::RULES_ONLY);
    let figures = evaluate(name, corpus, Policy::default());
    assert_eq!(figures.clean, 200, "the corpus keeps its size");
    assert!(figures.false_alarms.len() <= max_false_alarms, "{:?}", figures.false_alarms);
}

#[test]
fn ordinary_listing_sentences_are_left_alone() {
    measure_everyday("ordinary sentences", include_str!("data/fair_housing_plain.tsv"), MAX_FALSE_ALARMS_PLAIN);
    let second = include_str!("data/fair_housing_plain2.tsv");
    measure_everyday("ordinary sentences 2", second, MAX_FALSE_ALARMS_PLAIN_2);
    let short = include_str!("data/fair_housing_plain3.tsv");
    measure_everyday("short phrases", short, MAX_FALSE_ALARMS_PLAIN_3);
}
