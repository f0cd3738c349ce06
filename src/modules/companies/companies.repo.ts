import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import { isPgError, PG_FOREIGN_KEY_VIOLATION, PG_UNIQUE_VIOLATION } from '../../db/errors.js';
import type { Role } from '../../lib/roles.js';
import { AppErrors } from '../../http/errors.js';

export interface CompanyFields {
  name?: string;
  industry?: string | null;
  contact_email?: string | null;
  contact_phone?: string | null;
  address?: string | null;
  website?: string | null;
  working_hours?: string | null;
}

/**
 * The columns a caller may set, named one by one: a request body is never spread into SQL, so an
 * id, a timestamp or a key the schema did not foresee can never reach the table.
 */
function companyColumns(fields: CompanyFields) {
  return {
    name: fields.name,
    industry: fields.industry,
    contact_email: fields.contact_email,
    contact_phone: fields.contact_phone,
    address: fields.address,
    website: fields.website,
    working_hours: fields.working_hours,
  };
}

export async function insertCompany(db: Executor, fields: CompanyFields & { name: string }) {
  return db
    .insertInto('companies')
    .values({ ...companyColumns(fields), name: fields.name })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findCompany(db: Executor, companyId: string) {
  return db.selectFrom('companies').selectAll().where('id', '=', companyId).executeTakeFirst();
}

export async function updateCompany(db: Executor, companyId: string, fields: CompanyFields) {
  return db
    .updateTable('companies')
    .set({ ...companyColumns(fields), updated_at: sql`now()` })
    .where('id', '=', companyId)
    .returningAll()
    .executeTakeFirst();
}

export async function listCompaniesOfUser(db: Executor, userId: string, skip: number, limit: number) {
  const base = db
    .selectFrom('companies as c')
    .innerJoin('company_members as m', 'm.company_id', 'c.id')
    .where('m.user_id', '=', userId);
  const [rows, count] = await Promise.all([
    base.selectAll('c').orderBy('c.created_at').orderBy('c.id').offset(skip).limit(limit).execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: count.total };
}

/** The company a user's API keys act in (`null`: none). */
export async function setActiveCompany(db: Executor, userId: string, companyId: string | null) {
  await db
    .updateTable('users')
    .set({ active_company_id: companyId, updated_at: sql`now()` })
    .where('id', '=', userId)
    .execute();
}

/** A user's memberships, oldest first, with the company names. */
export async function listMemberships(db: Executor, userId: string) {
  return db
    .selectFrom('company_members as m')
    .innerJoin('companies as c', 'c.id', 'm.company_id')
    .select(['m.id', 'm.company_id', 'c.name as company_name', 'm.role', 'm.joined_at'])
    .where('m.user_id', '=', userId)
    .orderBy('m.joined_at')
    .orderBy('m.id')
    .execute();
}

/**
 * After a user left `companyId`: if it was their active company, their oldest remaining
 * membership becomes active (or none), in one statement.
 */
export async function moveActiveCompanyOff(db: Executor, userId: string, companyId: string) {
  await db
    .updateTable('users')
    .set((eb) => ({
      active_company_id: eb
        .selectFrom('company_members')
        .select('company_id')
        .where('user_id', '=', userId)
        .orderBy('joined_at')
        .orderBy('id')
        .limit(1),
      updated_at: sql`now()`,
    }))
    .where('id', '=', userId)
    .where('active_company_id', '=', companyId)
    .execute();
}

/** The membership of the user with this e-mail (any case) in a company; undefined when none. */
export async function findMembershipByEmail(db: Executor, companyId: string, email: string) {
  return db
    .selectFrom('company_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['m.id', 'm.user_id'])
    .where('m.company_id', '=', companyId)
    .where(sql`lower(u.email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}

/** The caller's membership in a company; undefined when they are not a member. */
export async function findMembership(db: Executor, companyId: string, userId: string) {
  return db
    .selectFrom('company_members')
    .selectAll()
    .where('company_id', '=', companyId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

const MEMBER_COLUMNS = [
  'm.id',
  'm.user_id',
  'm.company_id',
  'm.role',
  'm.joined_at',
  'u.email',
  'u.first_name',
  'u.last_name',
] as const;

export type MemberRow = Awaited<ReturnType<typeof findMember>> & object;

export async function findMember(db: Executor, companyId: string, memberId: string) {
  return db
    .selectFrom('company_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(MEMBER_COLUMNS)
    .where('m.company_id', '=', companyId)
    .where('m.id', '=', memberId)
    .executeTakeFirst();
}

export async function listMembers(db: Executor, companyId: string, roles: Role[] | null, skip: number, limit: number) {
  let base = db
    .selectFrom('company_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .where('m.company_id', '=', companyId);
  if (roles) base = base.where('m.role', 'in', roles);
  const [rows, count] = await Promise.all([
    base.select(MEMBER_COLUMNS).orderBy('m.joined_at').orderBy('m.id').offset(skip).limit(limit).execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: count.total };
}

/**
 * The user `userId` when `callerId` may enroll them in `companyId`: the user was created by an
 * administrator of that company (POST /users), or belongs to some company where the caller is an
 * owner or admin. Undefined otherwise, exactly as for an unknown id.
 */
export async function findEnrollableUser(db: Executor, companyId: string, callerId: string, userId: string) {
  return db
    .selectFrom('users as u')
    .select('u.id')
    .where('u.id', '=', userId)
    .where((eb) =>
      eb.or([
        eb('u.created_in_company_id', '=', companyId),
        eb.exists(
          eb
            .selectFrom('company_members as target')
            .innerJoin('company_members as manager', 'manager.company_id', 'target.company_id')
            .select('target.id')
            .whereRef('target.user_id', '=', 'u.id')
            .where('manager.user_id', '=', callerId)
            .where('manager.role', 'in', ['owner', 'admin']),
        ),
      ]),
    )
    .executeTakeFirst();
}

/** Adds a member; 409 when the user already is one, 404 when the user does not exist. */
export async function insertMember(db: Executor, member: { company_id: string; user_id: string; role: Role }) {
  try {
    const { id } = await db
      .insertInto('company_members')
      .values({ company_id: member.company_id, user_id: member.user_id, role: member.role })
      .returning('id')
      .executeTakeFirstOrThrow();
    return (await findMember(db, member.company_id, id))!;
  } catch (error) {
    if (isPgError(error, PG_UNIQUE_VIOLATION)) {
      throw AppErrors.conflict(`User ${member.user_id} is already a member of this company`);
    }
    if (isPgError(error, PG_FOREIGN_KEY_VIOLATION)) throw AppErrors.notFound('User', member.user_id);
    throw error;
  }
}

export async function setMemberRole(db: Executor, companyId: string, memberId: string, role: Role) {
  await db
    .updateTable('company_members')
    .set({ role })
    .where('company_id', '=', companyId)
    .where('id', '=', memberId)
    .execute();
}

export async function deleteMember(db: Executor, companyId: string, memberId: string) {
  await db.deleteFrom('company_members').where('company_id', '=', companyId).where('id', '=', memberId).execute();
}

/** Locks the company's owner rows (so two removals cannot both pass) and counts them. */
export async function lockOwners(db: Executor, companyId: string): Promise<number> {
  const rows = await db
    .selectFrom('company_members')
    .select('id')
    .where('company_id', '=', companyId)
    .where('role', '=', 'owner')
    .forUpdate()
    .execute();
  return rows.length;
}

const INVITATION_COLUMNS = [
  'id',
  'company_id',
  'email',
  'role',
  'message',
  'status',
  'token_hint',
  'expires_at',
  'created_at',
] as const;

export async function insertInvitation(
  db: Executor,
  invitation: {
    company_id: string;
    email: string;
    role: Role;
    message: string;
    token_hash: Buffer;
    token_hint: string;
    invited_by: string;
    expires_at: Date;
  },
) {
  try {
    return await db
      .insertInto('company_invitations')
      .values({
        company_id: invitation.company_id,
        email: invitation.email,
        role: invitation.role,
        message: invitation.message,
        token_hash: invitation.token_hash,
        token_hint: invitation.token_hint,
        invited_by: invitation.invited_by,
        expires_at: invitation.expires_at,
      })
      .returning(INVITATION_COLUMNS)
      .executeTakeFirstOrThrow();
  } catch (error) {
    if (isPgError(error, PG_UNIQUE_VIOLATION)) {
      throw AppErrors.conflict(`An invitation for ${invitation.email} is already pending`);
    }
    throw error;
  }
}

/** Marks pending invitations past their expiry as expired (lazily, before reads). */
export async function expireInvitations(db: Executor, companyId: string, now: Date) {
  await db
    .updateTable('company_invitations')
    .set({ status: 'expired' })
    .where('company_id', '=', companyId)
    .where('status', '=', 'pending')
    .where('expires_at', '<=', now)
    .execute();
}

export async function listPendingInvitations(db: Executor, companyId: string, skip: number, limit: number) {
  const base = db.selectFrom('company_invitations').where('company_id', '=', companyId).where('status', '=', 'pending');
  const [rows, count] = await Promise.all([
    base.select(INVITATION_COLUMNS).orderBy('created_at', 'desc').orderBy('id').offset(skip).limit(limit).execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: count.total };
}

export async function findInvitationByTokenForUpdate(db: Executor, tokenHash: Buffer) {
  return db
    .selectFrom('company_invitations')
    .select([...INVITATION_COLUMNS, 'token_hash'])
    .where('token_hash', '=', tokenHash)
    .forUpdate()
    .executeTakeFirst();
}

export async function setInvitationStatus(
  db: Executor,
  invitationId: string,
  status: 'accepted' | 'expired' | 'revoked',
  acceptedBy: string | null = null,
) {
  await db
    .updateTable('company_invitations')
    .set({ status, accepted_by: acceptedBy, accepted_at: status === 'accepted' ? sql`now()` : null })
    .where('id', '=', invitationId)
    .execute();
}

export async function revokeInvitation(db: Executor, companyId: string, invitationId: string): Promise<boolean> {
  const result = await db
    .updateTable('company_invitations')
    .set({ status: 'revoked' })
    .where('company_id', '=', companyId)
    .where('id', '=', invitationId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
