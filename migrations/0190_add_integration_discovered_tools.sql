-- The tools an integration's server said it has at its last live check (MCP servers: tools/list),
-- cached so that an agent's turn offers them without asking the server. Null: never listed.
alter table integrations add column discovered_tools jsonb;
