-- The company whose administrator created a user (POST /api/public/users). That company may
-- enroll the user later as a member or an administrator even while the user belongs to no
-- company; any other company reaches a user only through a shared company or an invitation
-- (docs/decisions.md, Companies).
alter table users add column created_in_company_id uuid references companies (id) on delete set null;
create index users_created_in_company_id_idx on users (created_in_company_id);
