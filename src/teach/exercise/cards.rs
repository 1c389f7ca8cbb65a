//! Recall cards: short questions with the answer shown on reveal.

use serde::Deserialize;

use crate::teach::exercise::ExerciseError;

/// A recall card: a short question and the answer shown on reveal.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Card {
    /// The question.
    pub question: String,
    /// The answer.
    pub answer: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCards {
    #[serde(rename = "card")]
    cards: Vec<Card>,
}

/// Parses a card file: `[[card]]` tables with `question` and `answer`.
pub fn parse_cards(text: &str) -> Result<Vec<Card>, ExerciseError> {
    let raw: RawCards =
        toml::from_str(text).map_err(|e| ExerciseError::Toml(e.to_string().trim().into()))?;
    for (i, c) in raw.cards.iter().enumerate() {
        if c.question.trim().is_empty() || c.answer.trim().is_empty() {
            return Err(ExerciseError::Invalid(format!(
                "card {}: question and answer must not be empty",
                i + 1
            )));
        }
    }
    Ok(raw
        .cards
        .into_iter()
        .map(|c| Card {
            question: c.question.trim().to_string(),
            answer: c.answer.trim().to_string(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_parse() {
        let cards =
            parse_cards("[[card]]\nquestion = \" q \"\nanswer = \"a\"\n[[card]]\nquestion = \"q2\"\nanswer = \"a2\"\n")
                .unwrap();
        assert_eq!(cards[0].question, "q");
        assert_eq!(cards.len(), 2);
        assert!(parse_cards("[[card]]\nquestion = \"\"\nanswer = \"a\"\n").is_err());
    }
}
