-- Every change that can alter who a credential is (revocation, membership, role, active company)
-- sends a notification; API instances drop their credential caches when they receive it.
-- notify_change(channel) serves every cache kept coherent this way (0004, 0041): statement
-- triggers pass the channel, the payload is the table's name.
create function notify_change() returns trigger language plpgsql as $$
begin
  perform pg_notify(tg_argv[0], tg_table_name);
  return null;
end;
$$;

create trigger api_keys_changed after update or delete on api_keys
  for each statement execute function notify_change('switchboard_credentials_changed');
create trigger chat_tokens_changed after update or delete on chat_tokens
  for each statement execute function notify_change('switchboard_credentials_changed');
create trigger users_changed after update or delete on users
  for each statement execute function notify_change('switchboard_credentials_changed');
create trigger company_members_changed after insert or update or delete on company_members
  for each statement execute function notify_change('switchboard_credentials_changed');
