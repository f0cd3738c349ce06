-- Alternative questions of a knowledge-base document (FAQ mode): indexed with the title in every
-- chunk's full-text vector, and read by the built-in responder as the questions the document answers.
alter table kb_documents add column questions text[] not null default '{}';
