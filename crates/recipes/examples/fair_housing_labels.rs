//! Labels a corpus with the Fair Housing phrase rules' verdict, for training the sentence model
//! (`crates/recipes/models/fair_housing/train.py`): reads `verdict<TAB>sentence` lines on stdin
//! and writes `label<TAB>sentence`, the label being `clean` or the category of the rules' first
//! finding (`familial_status`, `age`, ...), or `flag` for a flagged line the rules pass.
//!
//! `cargo run -p recipes --example fair_housing_labels < crates/recipes/tests/data/fair_housing_dev.tsv`

use recipes::listing_kit::fair_housing::{clean, Policy};
use std::io::{BufRead, Write};

fn main() -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let Some((verdict, sentence)) = line.split_once('\t').filter(|_| !line.starts_with('#')) else { continue };
        let mut findings = Vec::new();
        clean(sentence, "details.description", Policy::RULES_ONLY, &mut findings);
        let label = match (verdict, findings.first()) {
            ("clean", _) => "clean".to_string(),
            (_, Some(finding)) => serde_json::to_value(finding.category)?.as_str().unwrap_or("flag").to_string(),
            (_, None) => "flag".to_string(),
        };
        writeln!(out, "{label}\t{sentence}")?;
    }
    Ok(())
}
