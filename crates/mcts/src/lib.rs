//! # atomzero-mcts
//!
//! The search side of atomzero. No threads, no I/O: the search never calls a network itself;
//! callers batch [`EvalRequest`]s from many trees and hand them to an [`Evaluator`].

pub mod evaluator;

pub use evaluator::{EvalRequest, Evaluation, Evaluator, RandomEvaluator, UniformEvaluator};
