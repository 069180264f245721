//! The kinds of work a job can be, and the deadline of each: an engine job by its engine's family,
//! a recipe by its name. The match in [`JobKind::default_deadline`] is exhaustive, so a new family
//! or recipe does not compile until it has a deadline of its own.

use crate::catalog::Family;
use std::collections::HashMap;
use std::time::Duration;

/// A recipe. Its name is its endpoint (`/v1/recipes/lot-trace`) and the `recipe` tag of its
/// stored job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Recipe {
    /// A listing photo to a polished one.
    ListingEnhance,
    /// An aerial photo and a boundary to a measured, rendered parcel.
    LotTrace,
    /// Listing stills and details to a captioned vertical video.
    Reel,
    /// Listing photos and details to a marketing kit.
    ListingKit,
}

impl Recipe {
    /// Every recipe.
    pub const ALL: [Recipe; 4] = [Recipe::ListingEnhance, Recipe::LotTrace, Recipe::Reel, Recipe::ListingKit];

    /// The recipe's name (`lot-trace`).
    pub const fn name(self) -> &'static str {
        match self {
            Recipe::ListingEnhance => "listing-enhance",
            Recipe::LotTrace => "lot-trace",
            Recipe::Reel => "reel",
            Recipe::ListingKit => "listing-kit",
        }
    }
}

/// The kind of work a job is; it picks the job's deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JobKind {
    /// A job of an engine of this family.
    Engine(Family),
    /// A recipe.
    Recipe(Recipe),
    /// A job whose engine is no longer in the catalog (or a catalog-only family): it gets
    /// [`FALLBACK_DEADLINE`].
    Unlisted,
}

/// The deadline of an [`JobKind::Unlisted`] job.
pub const FALLBACK_DEADLINE: Duration = Duration::from_secs(600);

impl JobKind {
    /// Every kind with a deadline of its own, in the order the operator's documentation lists
    /// them.
    pub const NAMED: [JobKind; 15] = [
        JobKind::Engine(Family::ImageGeneration),
        JobKind::Engine(Family::ImageEditing),
        JobKind::Engine(Family::BackgroundRemoval),
        JobKind::Engine(Family::ImageUpscaling),
        JobKind::Engine(Family::ImageToVideo),
        JobKind::Engine(Family::TextToVideo),
        JobKind::Engine(Family::VideoToVideo),
        JobKind::Engine(Family::VideoUpscaling),
        JobKind::Engine(Family::LipSync),
        JobKind::Engine(Family::TextToSpeech),
        JobKind::Engine(Family::Music),
        JobKind::Recipe(Recipe::ListingEnhance),
        JobKind::Recipe(Recipe::LotTrace),
        JobKind::Recipe(Recipe::Reel),
        JobKind::Recipe(Recipe::ListingKit),
    ];

    /// The kind of a job of an engine of `family` (`None`: the engine is no longer listed).
    pub fn of_engine(family: Option<Family>) -> JobKind {
        match family {
            Some(Family::Recipe) | None => JobKind::Unlisted,
            Some(family) => JobKind::Engine(family),
        }
    }

    /// The kind's name: the family's (`video_upscaling`), the recipe's (`listing-kit`), or
    /// `unknown`.
    pub fn name(self) -> &'static str {
        match self {
            JobKind::Engine(family) => family.name(),
            JobKind::Recipe(recipe) => recipe.name(),
            JobKind::Unlisted => "unknown",
        }
    }

    /// The kind named `name`, if it is one with a deadline of its own.
    pub fn named(name: &str) -> Option<JobKind> {
        JobKind::NAMED.into_iter().find(|kind| kind.name() == name)
    }

    /// The default deadline: room for the largest accepted input on one core, with a margin.
    pub const fn default_deadline(self) -> Duration {
        let seconds = match self {
            JobKind::Engine(family) => match family {
                Family::ImageGeneration | Family::ImageEditing => 120,
                Family::BackgroundRemoval | Family::ImageUpscaling => 300,
                Family::ImageToVideo | Family::TextToVideo => 300,
                Family::VideoToVideo | Family::VideoUpscaling | Family::LipSync => 900,
                Family::TextToSpeech | Family::Music => 120,
                Family::Recipe => return FALLBACK_DEADLINE,
            },
            JobKind::Recipe(recipe) => match recipe {
                Recipe::ListingEnhance => 300,
                Recipe::LotTrace => 120,
                Recipe::Reel => 600,
                Recipe::ListingKit => 300,
            },
            JobKind::Unlisted => return FALLBACK_DEADLINE,
        };
        Duration::from_secs(seconds)
    }
}

impl std::fmt::Display for JobKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The deadline of each kind of work: the defaults, with an operator's overrides.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Deadlines {
    overrides: HashMap<JobKind, Duration>,
}

impl Deadlines {
    /// The defaults with `overrides` applied: `NAME=SECONDS` pairs separated by commas
    /// (`video_upscaling=1200,reel=300`). An unknown name or a zero is an error naming it.
    pub fn with_overrides(overrides: &str) -> Result<Deadlines, String> {
        let mut deadlines = Deadlines::default();
        for pair in overrides.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, secs) = pair.split_once('=').ok_or_else(|| format!("{pair:?} is not NAME=SECONDS"))?;
            let name = name.trim();
            let kind = JobKind::named(name).ok_or_else(|| {
                let known: Vec<&str> = JobKind::NAMED.iter().map(|k| k.name()).collect();
                format!("{name:?} is not a kind of work (one of {})", known.join(", "))
            })?;
            let seconds: u64 = secs
                .trim()
                .parse()
                .ok()
                .filter(|s| *s > 0)
                .ok_or_else(|| format!("{pair:?}: seconds must be at least 1"))?;
            deadlines.overrides.insert(kind, Duration::from_secs(seconds));
        }
        Ok(deadlines)
    }

    /// The deadline of a job of `kind`.
    pub fn of(&self, kind: JobKind) -> Duration {
        self.overrides.get(&kind).copied().unwrap_or(kind.default_deadline())
    }

    /// `NAME=SECONDS` pairs of every named kind, by name, for the start-up log.
    pub fn describe(&self) -> String {
        let mut pairs: Vec<String> =
            JobKind::NAMED.iter().map(|kind| format!("{kind}={}", self.of(*kind).as_secs())).collect();
        pairs.sort();
        pairs.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_default_and_take_overrides_by_name() {
        let deadlines = Deadlines::with_overrides(" video_upscaling=1200, reel=30 ").unwrap();
        assert_eq!(deadlines.of(JobKind::Engine(Family::VideoUpscaling)), Duration::from_secs(1200));
        assert_eq!(deadlines.of(JobKind::Recipe(Recipe::Reel)), Duration::from_secs(30));
        assert_eq!(deadlines.of(JobKind::Recipe(Recipe::LotTrace)), Duration::from_secs(120));
        assert_eq!(deadlines.of(JobKind::Unlisted), FALLBACK_DEADLINE);
        assert_eq!(deadlines.of(JobKind::of_engine(Some(Family::Recipe))), FALLBACK_DEADLINE);
        for (bad, says) in
            [("vidoe=3", "vidoe"), ("reel=0", "at least 1"), ("reel", "NAME=SECONDS"), ("reel=x", "reel=x")]
        {
            let error = Deadlines::with_overrides(bad).unwrap_err();
            assert!(error.contains(says), "{bad}: {error}");
        }
    }

    #[test]
    fn every_family_and_recipe_is_named_once_with_its_own_deadline() {
        let kinds = Family::PUBLIC.map(JobKind::Engine).into_iter().chain(Recipe::ALL.map(JobKind::Recipe));
        for kind in kinds {
            assert_eq!(JobKind::named(kind.name()), Some(kind), "{kind} is not named");
        }
        let names: std::collections::BTreeSet<&str> = JobKind::NAMED.iter().map(|k| k.name()).collect();
        assert_eq!(names.len(), JobKind::NAMED.len());
        assert_eq!(Deadlines::default().describe().split(',').find(|p| p.starts_with("reel=")), Some("reel=600"));
    }
}
