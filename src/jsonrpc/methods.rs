//! The method names of every MCP revision, as constants.

macro_rules! methods {
    ($($(#[$doc:meta])* $name:ident = $value:literal;)*) => {
        $($(#[$doc])* pub const $name: &str = $value;)*
        /// Every method name above, for interning.
        pub const KNOWN_METHODS: &[&str] = &[$($value),*];
    };
}

methods! {
    /// `initialize` (C→S, up to 2025-11-25).
    INITIALIZE = "initialize";
    /// `ping` (either way, up to 2025-11-25).
    PING = "ping";
    /// `tools/list`.
    TOOLS_LIST = "tools/list";
    /// `tools/call`.
    TOOLS_CALL = "tools/call";
    /// `resources/list`.
    RESOURCES_LIST = "resources/list";
    /// `resources/templates/list`.
    RESOURCES_TEMPLATES_LIST = "resources/templates/list";
    /// `resources/read`.
    RESOURCES_READ = "resources/read";
    /// `resources/subscribe`.
    RESOURCES_SUBSCRIBE = "resources/subscribe";
    /// `resources/unsubscribe`.
    RESOURCES_UNSUBSCRIBE = "resources/unsubscribe";
    /// `prompts/list`.
    PROMPTS_LIST = "prompts/list";
    /// `prompts/get`.
    PROMPTS_GET = "prompts/get";
    /// `completion/complete`.
    COMPLETION_COMPLETE = "completion/complete";
    /// `logging/setLevel`.
    LOGGING_SET_LEVEL = "logging/setLevel";
    /// `sampling/createMessage` (S→C).
    SAMPLING_CREATE_MESSAGE = "sampling/createMessage";
    /// `elicitation/create` (S→C).
    ELICITATION_CREATE = "elicitation/create";
    /// `roots/list` (S→C).
    ROOTS_LIST = "roots/list";
    /// `tasks/get`.
    TASKS_GET = "tasks/get";
    /// `tasks/result`.
    TASKS_RESULT = "tasks/result";
    /// `tasks/list`.
    TASKS_LIST = "tasks/list";
    /// `tasks/cancel`.
    TASKS_CANCEL = "tasks/cancel";
    /// `tasks/update` (2026-07-28 tasks extension).
    TASKS_UPDATE = "tasks/update";
    /// `server/discover` (2026-07-28).
    SERVER_DISCOVER = "server/discover";
    /// `subscriptions/listen` (2026-07-28).
    SUBSCRIPTIONS_LISTEN = "subscriptions/listen";
    /// `notifications/initialized`.
    NOTIFICATIONS_INITIALIZED = "notifications/initialized";
    /// `notifications/cancelled`.
    NOTIFICATIONS_CANCELLED = "notifications/cancelled";
    /// `notifications/progress`.
    NOTIFICATIONS_PROGRESS = "notifications/progress";
    /// `notifications/message` (log messages).
    NOTIFICATIONS_MESSAGE = "notifications/message";
    /// `notifications/resources/updated`.
    NOTIFICATIONS_RESOURCES_UPDATED = "notifications/resources/updated";
    /// `notifications/resources/list_changed`.
    NOTIFICATIONS_RESOURCES_LIST_CHANGED = "notifications/resources/list_changed";
    /// `notifications/tools/list_changed`.
    NOTIFICATIONS_TOOLS_LIST_CHANGED = "notifications/tools/list_changed";
    /// `notifications/prompts/list_changed`.
    NOTIFICATIONS_PROMPTS_LIST_CHANGED = "notifications/prompts/list_changed";
    /// `notifications/roots/list_changed`.
    NOTIFICATIONS_ROOTS_LIST_CHANGED = "notifications/roots/list_changed";
    /// `notifications/elicitation/complete`.
    NOTIFICATIONS_ELICITATION_COMPLETE = "notifications/elicitation/complete";
    /// `notifications/tasks/status`.
    NOTIFICATIONS_TASKS_STATUS = "notifications/tasks/status";
    /// `notifications/tasks` (2026-07-28 tasks extension).
    NOTIFICATIONS_TASKS = "notifications/tasks";
    /// `notifications/subscriptions/acknowledged` (2026-07-28).
    NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED = "notifications/subscriptions/acknowledged";
}
