from google.api import annotations_pb2 as _annotations_pb2
from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class NotificationSubscription(_message.Message):
    __slots__ = ("id", "workspace_id", "channel", "webhook", "email", "slack", "workflow_ids", "all_workflows", "level_filter", "trigger_filter", "include_final_output", "include_trace_spans", "include_rate_limits", "include_usage_data", "alert_rule", "active", "created_at", "updated_at", "alert_states", "disabled_reason", "disabled_at", "failing_since", "failed_deliveries", "event_types", "throttle_per_second", "state", "held_since", "held_count")
    ID_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_FIELD_NUMBER: _ClassVar[int]
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    SLACK_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_IDS_FIELD_NUMBER: _ClassVar[int]
    ALL_WORKFLOWS_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FILTER_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_FILTER_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_FINAL_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_TRACE_SPANS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_RATE_LIMITS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_USAGE_DATA_FIELD_NUMBER: _ClassVar[int]
    ALERT_RULE_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    ALERT_STATES_FIELD_NUMBER: _ClassVar[int]
    DISABLED_REASON_FIELD_NUMBER: _ClassVar[int]
    DISABLED_AT_FIELD_NUMBER: _ClassVar[int]
    FAILING_SINCE_FIELD_NUMBER: _ClassVar[int]
    FAILED_DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    THROTTLE_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    HELD_SINCE_FIELD_NUMBER: _ClassVar[int]
    HELD_COUNT_FIELD_NUMBER: _ClassVar[int]
    id: str
    workspace_id: str
    channel: str
    webhook: WebhookChannel
    email: EmailChannel
    slack: SlackChannel
    workflow_ids: _containers.RepeatedScalarFieldContainer[str]
    all_workflows: bool
    level_filter: _containers.RepeatedScalarFieldContainer[str]
    trigger_filter: _containers.RepeatedScalarFieldContainer[str]
    include_final_output: bool
    include_trace_spans: bool
    include_rate_limits: bool
    include_usage_data: bool
    alert_rule: AlertRule
    active: bool
    created_at: str
    updated_at: str
    alert_states: _containers.RepeatedCompositeFieldContainer[AlertState]
    disabled_reason: str
    disabled_at: str
    failing_since: str
    failed_deliveries: int
    event_types: _containers.RepeatedScalarFieldContainer[str]
    throttle_per_second: int
    state: str
    held_since: str
    held_count: int
    def __init__(self, id: _Optional[str] = ..., workspace_id: _Optional[str] = ..., channel: _Optional[str] = ..., webhook: _Optional[_Union[WebhookChannel, _Mapping]] = ..., email: _Optional[_Union[EmailChannel, _Mapping]] = ..., slack: _Optional[_Union[SlackChannel, _Mapping]] = ..., workflow_ids: _Optional[_Iterable[str]] = ..., all_workflows: _Optional[bool] = ..., level_filter: _Optional[_Iterable[str]] = ..., trigger_filter: _Optional[_Iterable[str]] = ..., include_final_output: _Optional[bool] = ..., include_trace_spans: _Optional[bool] = ..., include_rate_limits: _Optional[bool] = ..., include_usage_data: _Optional[bool] = ..., alert_rule: _Optional[_Union[AlertRule, _Mapping]] = ..., active: _Optional[bool] = ..., created_at: _Optional[str] = ..., updated_at: _Optional[str] = ..., alert_states: _Optional[_Iterable[_Union[AlertState, _Mapping]]] = ..., disabled_reason: _Optional[str] = ..., disabled_at: _Optional[str] = ..., failing_since: _Optional[str] = ..., failed_deliveries: _Optional[int] = ..., event_types: _Optional[_Iterable[str]] = ..., throttle_per_second: _Optional[int] = ..., state: _Optional[str] = ..., held_since: _Optional[str] = ..., held_count: _Optional[int] = ...) -> None: ...

class WebhookChannel(_message.Message):
    __slots__ = ("url", "secret", "generate_secret", "has_secret", "previous_secret_expires_at", "headers", "header_names", "signature_scheme", "propagate_trace_context")
    class HeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    URL_FIELD_NUMBER: _ClassVar[int]
    SECRET_FIELD_NUMBER: _ClassVar[int]
    GENERATE_SECRET_FIELD_NUMBER: _ClassVar[int]
    HAS_SECRET_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_SECRET_EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    HEADER_NAMES_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_SCHEME_FIELD_NUMBER: _ClassVar[int]
    PROPAGATE_TRACE_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    url: str
    secret: str
    generate_secret: bool
    has_secret: bool
    previous_secret_expires_at: str
    headers: _containers.ScalarMap[str, str]
    header_names: _containers.RepeatedScalarFieldContainer[str]
    signature_scheme: str
    propagate_trace_context: bool
    def __init__(self, url: _Optional[str] = ..., secret: _Optional[str] = ..., generate_secret: _Optional[bool] = ..., has_secret: _Optional[bool] = ..., previous_secret_expires_at: _Optional[str] = ..., headers: _Optional[_Mapping[str, str]] = ..., header_names: _Optional[_Iterable[str]] = ..., signature_scheme: _Optional[str] = ..., propagate_trace_context: _Optional[bool] = ...) -> None: ...

class EmailChannel(_message.Message):
    __slots__ = ("recipients",)
    RECIPIENTS_FIELD_NUMBER: _ClassVar[int]
    recipients: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, recipients: _Optional[_Iterable[str]] = ...) -> None: ...

class SlackChannel(_message.Message):
    __slots__ = ("url",)
    URL_FIELD_NUMBER: _ClassVar[int]
    url: str
    def __init__(self, url: _Optional[str] = ...) -> None: ...

class AlertRule(_message.Message):
    __slots__ = ("rule", "threshold", "window_hours")
    RULE_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    WINDOW_HOURS_FIELD_NUMBER: _ClassVar[int]
    rule: str
    threshold: float
    window_hours: float
    def __init__(self, rule: _Optional[str] = ..., threshold: _Optional[float] = ..., window_hours: _Optional[float] = ...) -> None: ...

class AlertState(_message.Message):
    __slots__ = ("workflow_id", "rule", "last_fired_at", "reason", "status", "resolved_at", "resolution_reason")
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    LAST_FIRED_AT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_AT_FIELD_NUMBER: _ClassVar[int]
    RESOLUTION_REASON_FIELD_NUMBER: _ClassVar[int]
    workflow_id: str
    rule: str
    last_fired_at: str
    reason: str
    status: str
    resolved_at: str
    resolution_reason: str
    def __init__(self, workflow_id: _Optional[str] = ..., rule: _Optional[str] = ..., last_fired_at: _Optional[str] = ..., reason: _Optional[str] = ..., status: _Optional[str] = ..., resolved_at: _Optional[str] = ..., resolution_reason: _Optional[str] = ...) -> None: ...

class CreateSubscriptionRequest(_message.Message):
    __slots__ = ("workspace_id", "subscription")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    SUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    subscription: NotificationSubscription
    def __init__(self, workspace_id: _Optional[str] = ..., subscription: _Optional[_Union[NotificationSubscription, _Mapping]] = ...) -> None: ...

class CreateSubscriptionResponse(_message.Message):
    __slots__ = ("subscription", "secret")
    SUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SECRET_FIELD_NUMBER: _ClassVar[int]
    subscription: NotificationSubscription
    secret: str
    def __init__(self, subscription: _Optional[_Union[NotificationSubscription, _Mapping]] = ..., secret: _Optional[str] = ...) -> None: ...

class GetSubscriptionRequest(_message.Message):
    __slots__ = ("workspace_id", "id")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    id: str
    def __init__(self, workspace_id: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class GetSubscriptionResponse(_message.Message):
    __slots__ = ("subscription",)
    SUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    subscription: NotificationSubscription
    def __init__(self, subscription: _Optional[_Union[NotificationSubscription, _Mapping]] = ...) -> None: ...

class ListSubscriptionsRequest(_message.Message):
    __slots__ = ("workspace_id",)
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    def __init__(self, workspace_id: _Optional[str] = ...) -> None: ...

class ListSubscriptionsResponse(_message.Message):
    __slots__ = ("subscriptions",)
    SUBSCRIPTIONS_FIELD_NUMBER: _ClassVar[int]
    subscriptions: _containers.RepeatedCompositeFieldContainer[NotificationSubscription]
    def __init__(self, subscriptions: _Optional[_Iterable[_Union[NotificationSubscription, _Mapping]]] = ...) -> None: ...

class UpdateSubscriptionRequest(_message.Message):
    __slots__ = ("workspace_id", "id", "subscription", "update_mask")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    SUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    id: str
    subscription: NotificationSubscription
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, workspace_id: _Optional[str] = ..., id: _Optional[str] = ..., subscription: _Optional[_Union[NotificationSubscription, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class UpdateSubscriptionResponse(_message.Message):
    __slots__ = ("subscription", "secret")
    SUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SECRET_FIELD_NUMBER: _ClassVar[int]
    subscription: NotificationSubscription
    secret: str
    def __init__(self, subscription: _Optional[_Union[NotificationSubscription, _Mapping]] = ..., secret: _Optional[str] = ...) -> None: ...

class DeleteSubscriptionRequest(_message.Message):
    __slots__ = ("workspace_id", "id")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    id: str
    def __init__(self, workspace_id: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class DeleteSubscriptionResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class EnableSubscriptionRequest(_message.Message):
    __slots__ = ("workspace_id", "id")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    id: str
    def __init__(self, workspace_id: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class EnableSubscriptionResponse(_message.Message):
    __slots__ = ("subscription",)
    SUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    subscription: NotificationSubscription
    def __init__(self, subscription: _Optional[_Union[NotificationSubscription, _Mapping]] = ...) -> None: ...

class DisableSubscriptionRequest(_message.Message):
    __slots__ = ("workspace_id", "id")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    id: str
    def __init__(self, workspace_id: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class DisableSubscriptionResponse(_message.Message):
    __slots__ = ("subscription",)
    SUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    subscription: NotificationSubscription
    def __init__(self, subscription: _Optional[_Union[NotificationSubscription, _Mapping]] = ...) -> None: ...

class RotateSecretRequest(_message.Message):
    __slots__ = ("workspace_id", "id", "secret", "grace_period_seconds")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    SECRET_FIELD_NUMBER: _ClassVar[int]
    GRACE_PERIOD_SECONDS_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    id: str
    secret: str
    grace_period_seconds: int
    def __init__(self, workspace_id: _Optional[str] = ..., id: _Optional[str] = ..., secret: _Optional[str] = ..., grace_period_seconds: _Optional[int] = ...) -> None: ...

class RotateSecretResponse(_message.Message):
    __slots__ = ("subscription", "secret")
    SUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SECRET_FIELD_NUMBER: _ClassVar[int]
    subscription: NotificationSubscription
    secret: str
    def __init__(self, subscription: _Optional[_Union[NotificationSubscription, _Mapping]] = ..., secret: _Optional[str] = ...) -> None: ...
