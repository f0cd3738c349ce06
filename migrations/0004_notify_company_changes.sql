-- Company records are cached by API instances too (GET /companies/current and every request
-- that needs the company); a change notifies every instance, which drops its caches.
create trigger companies_changed after update or delete on companies
  for each statement execute function notify_change('switchboard_credentials_changed');
