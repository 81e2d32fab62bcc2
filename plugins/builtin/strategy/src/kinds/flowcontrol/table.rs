//! FlowSchema and PriorityLevelConfiguration printers (kube's printFlowSchema and
//! printPriorityLevelConfiguration).

use crate::table::access::{age, list, name, opt_int, text};
use crate::table::columns::{text as column, AGE, NAME};
use crate::table::Column;
use chrono::{DateTime, Utc};
use serde_json::Value;

pub(crate) fn flow_schema_columns() -> Vec<Column> {
    vec![
        NAME,
        column("PriorityLevel", "`name` is the name of the priority level configuration being referenced Required."),
        column("MatchingPrecedence", "`matchingPrecedence` is used to choose among the FlowSchemas that match a given request. The chosen FlowSchema is among those with the numerically lowest (which we take to be logically highest) MatchingPrecedence.  Each MatchingPrecedence value must be ranged in [1,10000]. Note that if the precedence is not specified, it will be set to 1000 as default."),
        column("DistinguisherMethod", "`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema. `nil` specifies that the distinguisher is disabled and thus will always be the empty string."),
        AGE,
        column("MissingPL", "references a broken or non-existent PriorityLevelConfiguration"),
    ]
}

pub(crate) fn flow_schema_row(schema: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let method = match schema.pointer("/spec/distinguisherMethod") {
        Some(m) if m.is_object() => text(m, "/type").to_string(),
        _ => "<none>".to_string(),
    };
    let dangling = list(schema, "/status/conditions")
        .iter()
        .find(|c| c["type"] == "Dangling")
        .map_or("?", |c| text(c, "/status"));
    vec![
        name(schema),
        Value::from(text(schema, "/spec/priorityLevelConfiguration/name")),
        Value::from(opt_int(schema, "/spec/matchingPrecedence").unwrap_or(0)),
        Value::from(method),
        age(schema, now),
        Value::from(dangling),
    ]
}

pub(crate) fn priority_level_columns() -> Vec<Column> {
    vec![
        NAME,
        column("Type", "`type` indicates whether this priority level is subject to limitation on request execution.  A value of `\"Exempt\"` means that requests of this priority level are not subject to a limit (and thus are never queued) and do not detract from the capacity made available to other priority levels.  A value of `\"Limited\"` means that (a) requests of this priority level _are_ subject to limits and (b) some of the server's limited capacity is made available exclusively to this priority level. Required."),
        column("NominalConcurrencyShares", "`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level. This is the number of execution seats available at this priority level. This is used both for requests dispatched from this priority level as well as requests dispatched from other priority levels borrowing seats from this level. The server's concurrency limit (ServerCL) is divided among the Limited priority levels in proportion to their NCS values:\n\nNominalCL(i)  = ceil( ServerCL * NCS(i) / sum_ncs ) sum_ncs = sum[priority level k] NCS(k)\n\nBigger numbers mean a larger nominal concurrency limit, at the expense of every other priority level.\n\nIf not specified, this field defaults to a value of 30.\n\nSetting this field to zero supports the construction of a \"jail\" for this priority level that is used to hold some request(s)"),
        column("Queues", "`queues` is the number of queues for this priority level. The queues exist independently at each apiserver. The value must be positive.  Setting it to 1 effectively precludes shufflesharding and thus makes the distinguisher method of associated flow schemas irrelevant.  This field has a default value of 64."),
        column("HandSize", "`handSize` is a small positive number that configures the shuffle sharding of requests into queues.  When enqueuing a request at this priority level the request's flow identifier (a string pair) is hashed and the hash value is used to shuffle the list of queues and deal a hand of the size specified here.  The request is put into one of the shortest queues in that hand. `handSize` must be no larger than `queues`, and should be significantly smaller (so that a few heavy flows do not saturate most of the queues).  See the user-facing documentation for more extensive guidance on setting this field.  This field has a default value of 8."),
        column("QueueLengthLimit", "`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time; excess requests are rejected.  This value must be positive.  If not specified, it will be defaulted to 50."),
        AGE,
    ]
}

/// An integer at `pointer`, `<none>` when absent.
fn int_or_none(obj: &Value, pointer: &str) -> Value {
    opt_int(obj, pointer).map_or(Value::from("<none>"), Value::from)
}

pub(crate) fn priority_level_row(level: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let limited = level.pointer("/spec/limited").filter(|l| l.is_object());
    let queuing = limited
        .and_then(|l| l.pointer("/limitResponse/queuing"))
        .filter(|q| q.is_object());
    let none = || Value::from("<none>");
    let ncs = limited.map_or_else(none, |l| {
        Value::from(opt_int(l, "/nominalConcurrencyShares").unwrap_or(0))
    });
    let queue = |key: &str| queuing.map_or_else(none, |q| int_or_none(q, key));
    vec![
        name(level),
        Value::from(text(level, "/spec/type")),
        ncs,
        queue("/queues"),
        queue("/handSize"),
        queue("/queueLengthLimit"),
        age(level, now),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn limited_and_exempt_levels() {
        let limited = json!({"metadata": {"name": "workload-low"}, "spec": {"type": "Limited",
            "limited": {"nominalConcurrencyShares": 100, "limitResponse": {"type": "Queue",
                "queuing": {"queues": 128, "handSize": 6, "queueLengthLimit": 50}}}}});
        let row = priority_level_row(&limited, Utc::now());
        assert_eq!(
            &row[1..6],
            &[
                json!("Limited"),
                json!(100),
                json!(128),
                json!(6),
                json!(50)
            ]
        );
        let exempt =
            json!({"metadata": {"name": "exempt"}, "spec": {"type": "Exempt", "exempt": {}}});
        let row = priority_level_row(&exempt, Utc::now());
        assert_eq!(
            &row[2..6],
            &[
                json!("<none>"),
                json!("<none>"),
                json!("<none>"),
                json!("<none>")
            ]
        );
    }

    #[test]
    fn flow_schema_row_reads_the_dangling_condition() {
        let schema = json!({"metadata": {"name": "exempt"}, "spec": {
            "priorityLevelConfiguration": {"name": "exempt"}, "matchingPrecedence": 1},
            "status": {"conditions": [{"type": "Dangling", "status": "False"}]}});
        let row = flow_schema_row(&schema, Utc::now());
        assert_eq!(&row[1..4], &[json!("exempt"), json!(1), json!("<none>")]);
        assert_eq!(row[5], "False");
    }
}
