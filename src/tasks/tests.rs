//! The task store: transitions, TTL expiry with injected time, limits, wire shapes, params.

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use super::*;
use crate::jsonrpc::RawJson;
use crate::model::TaskStatus;

const T0: u64 = 1_780_000_000_000;

fn store(limits: TaskLimits) -> (TaskStore, String) {
    let mut s = TaskStore::new(limits);
    let id = s.create([7; 16], T0).unwrap().id.clone();
    (s, id)
}

#[test]
fn iso8601_formats_known_instants() {
    assert_eq!(iso8601_utc(0), "1970-01-01T00:00:00.000Z");
    assert_eq!(iso8601_utc(951_782_400_123), "2000-02-29T00:00:00.123Z");
    assert_eq!(iso8601_utc(1_785_196_800_000), "2026-07-28T00:00:00.000Z");
    let _ = iso8601_utc(u64::MAX);
}

#[test]
fn lifecycle_working_input_required_working_completed() {
    let (mut s, id) = store(TaskLimits::default());
    assert_eq!(id, "07".repeat(16));
    assert_eq!(s.get(&id, T0).unwrap().status, TaskStatus::Working);
    assert!(s.request_input(&id, "a".into(), json!({"method": "elicitation/create"})));
    assert!(s.request_input(&id, "b".into(), json!({"method": "elicitation/create"})));
    let t = s.get(&id, T0 + 5).unwrap();
    assert_eq!(t.status, TaskStatus::InputRequired);
    assert_eq!(
        t.updated_ms,
        T0 + 5,
        "a stale task takes the next time passed in"
    );
    let d = t.detailed_json();
    assert_eq!(d["inputRequests"].as_object().unwrap().len(), 2);
    let mut r = Map::new();
    r.insert("a".into(), json!({"action": "accept"}));
    r.insert("zzz".into(), json!({"ignored": true}));
    let answered = s.answer(&id, r, T0 + 6).unwrap();
    assert_eq!(
        answered,
        vec![("a".to_owned(), json!({"action": "accept"}))]
    );
    let t = s.get(&id, T0 + 6).unwrap();
    assert_eq!(t.status, TaskStatus::InputRequired, "b is still pending");
    assert_eq!(t.input_requests.keys().collect::<Vec<_>>(), vec!["b"]);
    let mut r = Map::new();
    r.insert("b".into(), json!({"action": "accept"}));
    s.answer(&id, r, T0 + 7).unwrap();
    assert_eq!(s.get(&id, T0 + 7).unwrap().status, TaskStatus::Working);
    let result =
        json!({"content": [], "_meta": {"io.modelcontextprotocol/related-task": {"taskId": id}}});
    s.complete(&id, result);
    let d = s.get(&id, T0 + 9).unwrap().detailed_json();
    assert_eq!(d["status"], "completed");
    assert_eq!(d["resultType"], "complete");
    assert!(d.get("error").is_none() && d.get("requestState").is_none());
    assert!(d["result"]["_meta"]
        .get("io.modelcontextprotocol/related-task")
        .is_none());
    assert_eq!(d["lastUpdatedAt"], iso8601_utc(T0 + 9));
}

#[test]
fn failed_has_error_never_result_and_terminal_states_stick() {
    let (mut s, id) = store(TaskLimits::default());
    s.fail(&id, json!({"code": -32603, "message": "boom"}));
    s.complete(&id, json!({"content": []}));
    let d = s.get(&id, T0).unwrap().detailed_json();
    assert_eq!(d["status"], "failed");
    assert_eq!(d["error"]["code"], -32603);
    assert!(d.get("result").is_none());
    assert_eq!(
        s.cancel(&id, T0),
        Ok(false),
        "cancel on a terminal task is a no-op"
    );
    assert_eq!(s.get(&id, T0).unwrap().status, TaskStatus::Failed);
    assert!(!s.request_input(&id, "k".into(), json!({})));
}

#[test]
fn cancel_is_idempotent_and_unknown_ids_are_refused() {
    let (mut s, id) = store(TaskLimits::default());
    assert_eq!(s.cancel(&id, T0 + 1), Ok(true));
    assert_eq!(s.cancel(&id, T0 + 2), Ok(false));
    s.complete(&id, json!({"content": []}));
    assert_eq!(s.get(&id, T0 + 3).unwrap().status, TaskStatus::Cancelled);
    assert_eq!(s.cancel("nope", T0).unwrap_err(), TaskError::Unknown);
    assert_eq!(s.get("nope", T0).unwrap_err(), TaskError::Unknown);
    assert_eq!(
        s.answer("nope", Map::new(), T0).unwrap_err(),
        TaskError::Unknown
    );
}

#[test]
fn ttl_never_expires_early_and_expires_on_time() {
    let (mut s, id) = store(TaskLimits {
        ttl_ms: 1000,
        ..Default::default()
    });
    let create = s.get(&id, T0).unwrap().create_result_json();
    assert_eq!(create["ttlMs"], 1000);
    assert_eq!(create["resultType"], "task");
    assert!(create.get("ttl").is_none() && create.get("pollInterval").is_none());
    assert!(s.get(&id, T0 + 999).is_ok());
    assert_eq!(s.expire(T0 + 1000), vec![id.clone()]);
    assert!(s.get(&id, T0 + 1000).is_err());
}

#[test]
fn ttl_is_clamped_and_the_table_is_bounded() {
    let limits = TaskLimits {
        max_tasks: 2,
        ttl_ms: 10_000_000,
        max_ttl_ms: 5000,
        ..Default::default()
    };
    let mut s = TaskStore::new(limits);
    assert_eq!(s.create([1; 16], T0).unwrap().ttl_ms, 5000);
    assert_eq!(s.create([1; 16], T0).unwrap_err(), TaskError::Collision);
    s.create([2; 16], T0).unwrap();
    assert_eq!(s.create([3; 16], T0).unwrap_err(), TaskError::Full);
    assert!(
        s.create([3; 16], T0 + 5000).is_ok(),
        "expired tasks make room"
    );
    assert_eq!(s.len(), 1);
}

#[test]
fn inputs_per_task_are_bounded() {
    let (mut s, id) = store(TaskLimits {
        max_inputs: 1,
        ..Default::default()
    });
    assert!(s.request_input(&id, "a".into(), json!({})));
    assert!(!s.request_input(&id, "b".into(), json!({})));
}

#[test]
fn params_and_gate() {
    let raw = |v: Value| RawJson::try_from(&v).unwrap();
    let p = parse_task_params(TASKS_GET, Some(&raw(json!({"taskId": "x"})))).unwrap();
    assert_eq!(p.task_id, "x");
    assert!(parse_task_params(TASKS_GET, Some(&raw(json!({"taskId": 1})))).is_err());
    assert!(parse_task_params(TASKS_UPDATE, Some(&raw(json!({"taskId": "x"})))).is_err());
    assert!(parse_task_params(TASKS_CANCEL, None).is_err());
    let e = missing_tasks_error();
    assert_eq!(e.code, -32021);
    let data = e.data.unwrap().to_value().unwrap();
    assert_eq!(
        data["requiredCapabilities"]["extensions"][TASKS_EXTENSION],
        json!({})
    );
    assert!(is_task_method("tasks/get") && !is_task_method("tasks/result"));
    assert!(!is_task_method("tasks/list"));
}

proptest! {
    #[test]
    fn no_panic_on_any_params(method in prop::sample::select(vec![TASKS_GET, TASKS_UPDATE, TASKS_CANCEL]),
                              text in ".{0,64}", n in any::<i64>()) {
        for v in [json!({"taskId": text, "inputResponses": n}), json!(text), json!({"taskId": n}),
                  json!({"taskId": text, "inputResponses": {text.clone(): n}})] {
            if let Ok(raw) = RawJson::try_from(&v) {
                let _ = parse_task_params(method, Some(&raw));
            }
        }
    }

    #[test]
    fn random_operations_keep_invariants(ops in prop::collection::vec((0u8..6, 0u8..4, 0u64..3000), 0..64)) {
        let mut s = TaskStore::new(TaskLimits { max_tasks: 3, ttl_ms: 1000, max_inputs: 2, ..Default::default() });
        let mut now = T0;
        for (op, which, dt) in ops {
            now += dt;
            let id = format!("{which:02x}").repeat(16);
            match op {
                0 => { let _ = s.create([which; 16], now); }
                1 => { let _ = s.request_input(&id, format!("k{dt}"), json!({})); }
                2 => { let mut r = Map::new(); r.insert(format!("k{dt}"), json!({})); let _ = s.answer(&id, r, now); }
                3 => { let _ = s.cancel(&id, now); }
                4 => s.complete(&id, json!({"content": []})),
                _ => s.fail(&id, json!({"code": 1, "message": "x"})),
            }
            prop_assert!(s.len() <= 3);
            if let Ok(t) = s.get(&id, now) {
                prop_assert!(now < t.created_ms + t.ttl_ms);
                prop_assert_eq!(t.status == TaskStatus::InputRequired, !t.input_requests.is_empty());
                prop_assert!(!(t.result.is_some() && t.error.is_some()));
                let d = t.detailed_json();
                prop_assert!(!(d.get("result").is_some() && d.get("error").is_some()));
            }
        }
    }
}
