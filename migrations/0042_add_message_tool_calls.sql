-- The tool calls an agent made in a turn, stored with its answer (issue 14): one object per call,
-- {tool, integration_id, integration_type, connector_tool, notification, status, summary,
-- execution_ms[, recipient_email, email_subject]}. Results and inputs are not stored.
alter table conversation_messages add column tool_calls jsonb not null default '[]';
