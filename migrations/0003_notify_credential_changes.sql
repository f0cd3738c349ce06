-- Every change that can alter who a credential is (revocation, membership, role, active company)
-- sends a notification; API instances drop their credential caches when they receive it.
create function notify_credentials_changed() returns trigger language plpgsql as $$
begin
  perform pg_notify('switchboard_credentials_changed', tg_table_name);
  return null;
end;
$$;

create trigger api_keys_changed after update or delete on api_keys
  for each statement execute function notify_credentials_changed();
create trigger chat_tokens_changed after update or delete on chat_tokens
  for each statement execute function notify_credentials_changed();
create trigger users_changed after update or delete on users
  for each statement execute function notify_credentials_changed();
create trigger company_members_changed after insert or update or delete on company_members
  for each statement execute function notify_credentials_changed();
