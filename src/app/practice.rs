//! Practice mode: the built-in exercises one step at a time, with answers checked by the
//! core, hints after a miss, reveals and a score; and the recall cards.

use std::sync::Arc;

use ratatui_textarea::TextArea;

use crate::core::Matrix;
use crate::core::explain::{ChannelExplanation, explain_channel};
use crate::teach::assets::{cards, exercise_matrix, exercises};
use crate::teach::exercise::{Card, Exercise, Session};

/// The recall cards, one at a time.
#[derive(Debug, Clone)]
pub struct CardDeck {
    /// Every card.
    pub cards: Vec<Card>,
    /// The card shown.
    pub index: usize,
    /// Its answer is shown.
    pub revealed: bool,
}

/// The state of practice mode.
#[derive(Debug)]
pub struct Practice {
    /// The built-in exercises.
    pub exercises: Vec<Exercise>,
    /// The one being practised.
    pub index: usize,
    /// Its session: steps, answers, hints, score.
    pub session: Session,
    /// Where the exercise's data came from, in words.
    pub data_note: String,
    /// The answer being typed.
    pub input: TextArea<'static>,
    /// The last answer checked, shown beside its verdict.
    pub last_answer: Option<String>,
    /// The worked arithmetic of the step's row, once the step is solved or revealed.
    pub worked: Option<Arc<ChannelExplanation>>,
    /// The recall cards, when shown instead of the exercise.
    pub deck: Option<CardDeck>,
    /// The first line of the step's text shown (Up and Down scroll it).
    pub scroll: u16,
    /// The sessions of the other exercises (with their data notes), kept with their
    /// progress and score while the learner moves between exercises (by exercise index).
    pub kept: Vec<Option<(Session, String)>>,
}

fn new_input() -> TextArea<'static> {
    let mut input = TextArea::default();
    input.set_placeholder_text("type the answer, then Enter");
    input
}

impl Practice {
    /// Starts exercise `index`. An exercise that works on the learner's own rows uses
    /// `learner` when it has at least two rows, and a generated pair otherwise.
    pub fn start(index: usize, learner: Option<&Matrix>) -> Result<Self, String> {
        let exercises = exercises();
        let index = index.min(exercises.len().saturating_sub(1));
        let exercise = exercises
            .get(index)
            .cloned()
            .ok_or("no exercises are built in")?;
        let (matrix, data_note) = match learner {
            Some(m) if exercise.learner_rows && m.shape().0 >= 2 => {
                (m.clone(), "your rows from the editor".to_string())
            }
            _ => {
                let note = if exercise.learner_rows {
                    "a generated pair (write two rows in the editor to use your own)"
                } else {
                    "the exercise's own data"
                };
                (
                    exercise_matrix(&exercise).map_err(|e| e.to_string())?,
                    note.to_string(),
                )
            }
        };
        let session = Session::new(exercise, matrix).map_err(|e| e.to_string())?;
        let n = exercises.len();
        Ok(Self {
            exercises,
            index,
            session,
            data_note,
            input: new_input(),
            last_answer: None,
            worked: None,
            deck: None,
            scroll: 0,
            kept: vec![None; n],
        })
    }

    /// Moves to exercise `index`, keeping the current one's session (progress and score)
    /// to come back to; an exercise visited before continues where it was left.
    pub fn switch_to(&mut self, index: usize, learner: Option<&Matrix>) -> Result<(), String> {
        if index == self.index || index >= self.exercises.len() {
            return Ok(());
        }
        let (session, note) = if let Some(kept) = self.kept[index].take() {
            kept
        } else {
            let fresh = Self::start(index, learner)?;
            (fresh.session, fresh.data_note)
        };
        let old = std::mem::replace(&mut self.session, session);
        let old_note = std::mem::replace(&mut self.data_note, note);
        self.kept[self.index] = Some((old, old_note));
        self.index = index;
        self.clear_input();
        self.refresh_worked();
        Ok(())
    }

    /// The points scored over every exercise visited, and the most there are to score in
    /// them.
    #[must_use]
    pub fn total_score(&self) -> (u32, u32) {
        let sessions = self
            .kept
            .iter()
            .flatten()
            .map(|k| &k.0)
            .chain([&self.session]);
        sessions.fold((0, 0), |(s, m), x| (s + x.score(), m + x.max_score()))
    }

    /// The text typed so far.
    #[must_use]
    pub fn answer_text(&self) -> String {
        self.input.lines().join(" ")
    }

    /// Clears the answer field (after a step change), and shows the step's text from its top.
    pub fn clear_input(&mut self) {
        self.input = new_input();
        self.last_answer = None;
        self.scroll = 0;
    }

    /// Recomputes the worked arithmetic for the current step, shown once it is done; the
    /// step's text is shown from its top again (a verdict, a hint or a reveal was added).
    pub fn refresh_worked(&mut self) {
        self.scroll = 0;
        let done = self.session.progress().done();
        let row = self.session.step().row;
        self.worked = match row {
            Some(r) if done && r < self.session.matrix().shape().0 => {
                let report = &self.session.prepared().report;
                Some(Arc::new(explain_channel(self.session.matrix(), report, r)))
            }
            _ => None,
        };
    }

    /// Shows the recall cards (or hides them).
    pub fn toggle_cards(&mut self) {
        self.deck = match self.deck {
            Some(_) => None,
            None => Some(CardDeck {
                cards: cards(),
                index: 0,
                revealed: false,
            }),
        };
    }
}
