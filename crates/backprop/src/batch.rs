//! A training batch with sparse policy targets: each position's legal moves (policy indices)
//! with the target's weight on each. A position has ~30 legal moves of the 4672 indices, so
//! the policy loss and its gradient only touch those.

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
    /// `[B][3]`: win, draw, loss for the side to move.
    pub wdl: Vec<f32>,
}

impl SparseBatch {
    /// An empty batch of positions with `planes` input planes.
    pub fn new(planes: usize) -> SparseBatch {
        SparseBatch { planes, offsets: vec![0], ..SparseBatch::default() }
    }

    /// Empties the batch, keeping its allocations.
    pub fn clear(&mut self) {
        self.len = 0;
        self.inputs.clear();
        self.offsets.clear();
        self.offsets.push(0);
        self.legal.clear();
        self.targets.clear();
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
        let expected = self.planes * 64;
        if input.len() != expected {
            return Err(BatchError::InputLength { expected, found: input.len() });
        }
        let mark = self.legal.len();
        for (index, weight) in policy {
            if index >= POLICY_SIZE {
                self.legal.truncate(mark);
                self.targets.truncate(mark);
                return Err(BatchError::PolicyIndex(index));
            }
            self.legal.push(index as u16);
            self.targets.push(weight);
        }
        self.inputs.extend_from_slice(input);
        self.offsets.push(self.legal.len());
        self.wdl.extend_from_slice(&wdl);
        self.len += 1;
        Ok(())
    }

    /// Position `i`'s legal policy indices and target weights.
    pub fn policy(&self, i: usize) -> (&[u16], &[f32]) {
        let range = self.offsets[i]..self.offsets[i + 1];
        (&self.legal[range.clone()], &self.targets[range])
    }

    /// The dense form: `policy [B][4672]` targets and `legal [B][4672]` masks (for Burn).
    pub fn dense(&self) -> (Vec<f32>, Vec<bool>) {
        let mut policy = vec![0.0f32; self.len * POLICY_SIZE];
        let mut legal = vec![false; self.len * POLICY_SIZE];
        for i in 0..self.len {
            let (indices, targets) = self.policy(i);
            for (&index, &target) in indices.iter().zip(targets) {
                policy[i * POLICY_SIZE + usize::from(index)] += target;
                legal[i * POLICY_SIZE + usize::from(index)] = true;
            }
        }
        (policy, legal)
    }
}
