-- conversation.handoff (webhooks, migration 0160): a conversation leaves its agent for a person
-- (`handler` from `bot` to `handoff`, or straight to `assigned` when a person takes over).
create trigger conversations_webhook_handoff after update of handler on conversations
  for each row when (old.handler = 'bot' and new.handler <> 'bot')
  execute function webhook_record_update('conversation.handoff');
