-- Voice agents may speak Opus (opus_48000_*, served since the offline engine encodes it): the
-- format's check of migration 0060 knew the other codecs only.
alter table voice_agents drop constraint voice_agents_output_format_check;
alter table voice_agents add constraint voice_agents_output_format_check
  check (output_format ~ '^(mp3|pcm|ulaw|alaw|wav|opus)_[0-9]+(_[0-9]+)?$') not valid;
alter table voice_agents validate constraint voice_agents_output_format_check;
