//! The runtime cost budget, enforced inside the evaluator (cel-go's
//! `CostTracker` with kube's `PerCallLimit`): the functions whose result or
//! work grows with their arguments' contents (`replace`, `split`, `join`,
//! `matches`, `find`, `findAll`) charge kube's actual cost for each call to
//! the evaluation in progress on this thread, and check the size of their
//! result before building it. A call past the limit fails with kube's
//! "operation cancelled: actual cost limit exceeded", one past the
//! evaluation's deadline with cel-go's "operation interrupted", so no
//! error in the estimate computed before evaluating can exhaust memory or
//! CPU.
//!
//! Outside [`metered`] (an evaluation nobody bounded) a call is still
//! refused a result longer than [`MAX_RESULT_CHARS`]: Capstan's own bound,
//! kube has none (its estimate refuses such rules at write time).

use std::cell::RefCell;
use std::time::Instant;

use cel::ExecutionError;

use crate::rules::cost::PER_CALL_LIMIT;

/// The longest string or list a guarded function builds outside a metered
/// evaluation: what one call's limit can traverse once (0.1 per
/// character), 10 million characters or elements.
pub const MAX_RESULT_CHARS: u64 = PER_CALL_LIMIT * 10;

/// kube's text (cel-go's `CostLimitExceeded`) for a call past its limit.
pub const COST_LIMIT_EXCEEDED: &str = "operation cancelled: actual cost limit exceeded";
/// cel-go's text for an evaluation stopped by its context's deadline.
pub const INTERRUPTED: &str = "operation interrupted";

/// What an evaluation may spend.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// The cost the guarded calls may charge together.
    pub limit: u64,
    /// When the evaluation must stop, if ever.
    pub deadline: Option<Instant>,
}

impl Budget {
    /// kube's per-call limit, without a deadline.
    pub fn per_call() -> Budget {
        Budget {
            limit: PER_CALL_LIMIT,
            deadline: None,
        }
    }
}

/// What an evaluation spent, and why it was stopped if it was.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spent {
    pub cost: u64,
    pub exceeded: bool,
    pub interrupted: bool,
}

#[derive(Debug, Clone, Copy)]
struct Tracker {
    budget: Budget,
    spent: Spent,
}

thread_local! {
    static TRACKER: RefCell<Option<Tracker>> = const { RefCell::new(None) };
}

/// Runs `evaluate` (one CEL evaluation on this thread) within `budget`.
pub fn metered<T>(budget: Budget, evaluate: impl FnOnce() -> T) -> (T, Spent) {
    let fresh = Tracker {
        budget,
        spent: Spent::default(),
    };
    let outer = TRACKER.with(|t| t.replace(Some(fresh)));
    let result = evaluate();
    let mine = TRACKER.with(|t| t.replace(outer));
    (result, mine.map(|t| t.spent).unwrap_or_default())
}

fn with_tracker<R>(f: impl FnOnce(Option<&mut Tracker>) -> R) -> R {
    TRACKER.with(|t| f(t.borrow_mut().as_mut()))
}

/// Charges `cost` to the evaluation in progress.
pub(crate) fn charge(function: &str, cost: u64) -> Result<(), ExecutionError> {
    with_tracker(|tracker| {
        let Some(t) = tracker else { return Ok(()) };
        if t.budget.deadline.is_some_and(|d| Instant::now() >= d) {
            t.spent.interrupted = true;
            return Err(ExecutionError::function_error(function, INTERRUPTED));
        }
        t.spent.cost = t.spent.cost.saturating_add(cost);
        if t.spent.cost > t.budget.limit {
            t.spent.exceeded = true;
            return Err(ExecutionError::function_error(
                function,
                COST_LIMIT_EXCEEDED,
            ));
        }
        Ok(())
    })
}

/// Charges the construction of a result of `len` characters (a list's
/// elements count ten each) at 0.1 per character, before it is built, and
/// refuses it when that is past the limit (or, unmetered, when it is
/// longer than [`MAX_RESULT_CHARS`]). cel-go leaves this to the result's
/// later traversals; charging it here bounds what an evaluation allocates.
pub(crate) fn admit(function: &str, len: u64) -> Result<(), ExecutionError> {
    let traversal = len.div_ceil(10);
    with_tracker(|tracker| {
        let Some(t) = tracker else {
            return match len <= MAX_RESULT_CHARS {
                true => Ok(()),
                false => Err(ExecutionError::function_error(
                    function,
                    COST_LIMIT_EXCEEDED,
                )),
            };
        };
        let spent = t.spent.cost.saturating_add(traversal);
        if spent > t.budget.limit {
            t.spent.exceeded = true;
            return Err(ExecutionError::function_error(
                function,
                COST_LIMIT_EXCEEDED,
            ));
        }
        t.spent.cost = spent;
        Ok(())
    })
}

/// `ceil(size * per_ten / 10)`: cel-go's cost factors 0.1, 0.2, 0.25 as
/// tenths (0.25 as 2.5 tenths is [`regex_factor`]).
pub(crate) fn tenths(size: u64, per_ten: u64) -> u64 {
    size.saturating_mul(per_ten).div_ceil(10)
}

/// `ceil(size * 0.25)`: cel-go's `RegexStringLengthCostFactor`.
pub(crate) fn regex_factor(size: u64) -> u64 {
    size.div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_add_up_to_the_limit_then_fail() {
        let budget = Budget {
            limit: 10,
            deadline: None,
        };
        let (results, spent) = metered(budget, || {
            [charge("f", 6), charge("f", 4), charge("f", 1)]
                .map(|r| r.is_ok())
                .to_vec()
        });
        assert_eq!(results, [true, true, false]);
        assert!(spent.exceeded && !spent.interrupted);
        assert_eq!(spent.cost, 11);
        assert!(charge("f", u64::MAX).is_ok(), "no tracker outside metered");
    }

    #[test]
    fn results_are_admitted_by_what_is_left() {
        let budget = Budget {
            limit: 100,
            deadline: None,
        };
        let ((small, large), spent) = metered(budget, || {
            (admit("f", 600).is_ok(), admit("f", 401).is_ok())
        });
        assert!(small && !large && spent.exceeded);
        assert_eq!(spent.cost, 60);
        assert!(admit("f", MAX_RESULT_CHARS).is_ok());
        assert!(admit("f", MAX_RESULT_CHARS + 1).is_err());
    }

    #[test]
    fn a_passed_deadline_interrupts() {
        let budget = Budget {
            limit: 10,
            deadline: Some(Instant::now()),
        };
        let (error, spent) = metered(budget, || charge("f", 1).err());
        assert!(spent.interrupted);
        assert_eq!(
            error,
            Some(ExecutionError::function_error("f", INTERRUPTED))
        );
    }

    #[test]
    fn nested_evaluations_keep_their_own_budget() {
        let outer = Budget {
            limit: 5,
            deadline: None,
        };
        let (_, spent) = metered(outer, || {
            let _ = charge("f", 3);
            let (_, inner) = metered(Budget::per_call(), || charge("g", 100));
            assert_eq!(inner.cost, 100);
            charge("f", 3)
        });
        assert_eq!(spent.cost, 6);
        assert!(spent.exceeded);
    }
}
