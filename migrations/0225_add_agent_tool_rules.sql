-- Which integration tool the built-in responder calls for which rule (order look-up, escalation
-- ticket): {"order_lookup": {"integration_id", "tool", "input_key"?}, "escalation_ticket": {…}}.
-- Empty: the integrations' tools of the usual names.
alter table agents add column tool_rules jsonb not null default '{}'::jsonb;
