//! A training batch with sparse policy targets: each position's legal moves (policy indices)
//! with the target's weight on each. A position has ~30 legal moves of the 4672 indices, so
//! the policy loss and its gradient only touch those. For nets with an opponent-policy head a
//! position may also carry the opponent's legal replies (`atomzero_encoding::reply_index`)
//! with targets whose sum is the auxiliary loss's weight (KataGo: 0.15): the cross-entropy
//! against targets summing to `w` is `w` times the one against their normalised form.

use std::fmt;

use atomzero_encoding::POLICY_SIZE;

/// A position that could not be added to a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BatchError {
    /// The input planes have the wrong length.
    InputLength { expected: usize, found: usize },
    /// A policy index is not below 4672.
    PolicyIndex(usize),
}

impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BatchError::InputLength { expected, found } => {
                write!(f, "input has {found} values, expected {expected}")
            }
            BatchError::PolicyIndex(i) => write!(f, "policy index {i} is not below {POLICY_SIZE}"),
        }
    }
}

impl std::error::Error for BatchError {}

/// Positions with their inputs `[B][planes][64]` (as `atomzero_encoding` lays them out),
/// legal moves with policy targets, and WDL targets.
#[derive(Clone, Debug, Default)]
pub struct SparseBatch {
    /// Positions.
    pub len: usize,
    /// Input planes per position.
    pub planes: usize,
    /// `[B][planes][64]`.
    pub inputs: Vec<f32>,
    offsets: Vec<usize>,
    legal: Vec<u16>,
    targets: Vec<f32>,
    reply_offsets: Vec<usize>,
    reply_legal: Vec<u16>,
    reply_targets: Vec<f32>,
    /// `[B][3]`: win, draw, loss for the side to move.
    pub wdl: Vec<f32>,
}

impl SparseBatch {
    /// An empty batch of positions with `planes` input planes.
    pub fn new(planes: usize) -> SparseBatch {
        SparseBatch { planes, offsets: vec![0], reply_offsets: vec![0], ..SparseBatch::default() }
    }

    /// Empties the batch, keeping its allocations.
    pub fn clear(&mut self) {
        self.len = 0;
        self.inputs.clear();
        self.offsets.clear();
        self.offsets.push(0);
        self.legal.clear();
        self.targets.clear();
        self.reply_offsets.clear();
        self.reply_offsets.push(0);
        self.reply_legal.clear();
        self.reply_targets.clear();
        self.wdl.clear();
    }

    /// Adds a position: its encoded input, each legal move's policy index with the target's
    /// weight on it (the weights should sum to 1; a move's index must appear once), and
    /// its WDL target.
    pub fn push(
        &mut self,
        input: &[f32],
        policy: impl IntoIterator<Item = (usize, f32)>,
        wdl: [f32; 3],
    ) -> Result<(), BatchError> {
        self.push_with_reply(input, policy, [], wdl)
    }

    /// [`SparseBatch::push`] with the opponent's replies for an opponent-policy head: each
    /// legal reply's index with its target weight (the weights sum to the auxiliary loss's
    /// weight; none: no auxiliary loss for this position).
    pub fn push_with_reply(
        &mut self,
        input: &[f32],
        policy: impl IntoIterator<Item = (usize, f32)>,
        reply: impl IntoIterator<Item = (usize, f32)>,
        wdl: [f32; 3],
    ) -> Result<(), BatchError> {
        let expected = self.planes * 64;
        if input.len() != expected {
            return Err(BatchError::InputLength { expected, found: input.len() });
        }
        let (mark, reply_mark) = (self.legal.len(), self.reply_legal.len());
        let undo = |batch: &mut SparseBatch, index: usize| {
            batch.legal.truncate(mark);
            batch.targets.truncate(mark);
            batch.reply_legal.truncate(reply_mark);
            batch.reply_targets.truncate(reply_mark);
            Err(BatchError::PolicyIndex(index))
        };
        for (index, weight) in policy {
            if index >= POLICY_SIZE {
                return undo(self, index);
            }
            self.legal.push(index as u16);
            self.targets.push(weight);
        }
        for (index, weight) in reply {
            if index >= POLICY_SIZE {
                return undo(self, index);
            }
            self.reply_legal.push(index as u16);
            self.reply_targets.push(weight);
        }
        self.inputs.extend_from_slice(input);
        self.offsets.push(self.legal.len());
        self.reply_offsets.push(self.reply_legal.len());
        self.wdl.extend_from_slice(&wdl);
        self.len += 1;
        Ok(())
    }

    /// Position `i`'s opponent replies (indices of the opponent-policy head) and their
    /// target weights; empty if it has none.
    pub fn reply(&self, i: usize) -> (&[u16], &[f32]) {
        let range = self.reply_offsets[i]..self.reply_offsets[i + 1];
        (&self.reply_legal[range.clone()], &self.reply_targets[range])
    }

    /// True if some position carries opponent replies.
    pub fn has_replies(&self) -> bool {
        !self.reply_legal.is_empty()
    }

    /// Position `i`'s legal policy indices and target weights.
    pub fn policy(&self, i: usize) -> (&[u16], &[f32]) {
        let range = self.offsets[i]..self.offsets[i + 1];
        (&self.legal[range.clone()], &self.targets[range])
    }

    /// The dense form: `policy [B][4672]` targets and `legal [B][4672]` masks (for Burn).
    pub fn dense(&self) -> (Vec<f32>, Vec<bool>) {
        self.dense_of(|i| self.policy(i))
    }

    /// The replies' dense form, as [`SparseBatch::dense`] (all zero and `false` for positions
    /// without replies).
    pub fn reply_dense(&self) -> (Vec<f32>, Vec<bool>) {
        self.dense_of(|i| self.reply(i))
    }

    fn dense_of<'a>(
        &'a self,
        sparse: impl Fn(usize) -> (&'a [u16], &'a [f32]),
    ) -> (Vec<f32>, Vec<bool>) {
        let mut policy = vec![0.0f32; self.len * POLICY_SIZE];
        let mut legal = vec![false; self.len * POLICY_SIZE];
        for i in 0..self.len {
            let (indices, targets) = sparse(i);
            for (&index, &target) in indices.iter().zip(targets) {
                policy[i * POLICY_SIZE + usize::from(index)] += target;
                legal[i * POLICY_SIZE + usize::from(index)] = true;
            }
        }
        (policy, legal)
    }
}
