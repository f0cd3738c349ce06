-- The integrations list is paged (skip, limit) newest first with the id as tie-break: the index
-- holds that whole order, so a page is read from the index without a sort.
create index integrations_company_page_idx on integrations (company_id, created_at desc, id desc);
drop index integrations_company_id_idx;
