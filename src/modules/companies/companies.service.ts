/**
 * Companies, memberships and invitations. Rules: admins manage the company, its members and
 * invitations; only an owner may create or remove an owner; the last owner cannot be removed;
 * anyone may leave a company (unless they are its last owner); an admin enrolls only users within
 * reach (created here, or in a company the admin manages), others are a 404 like unknown ids.
 */
import type { Db, Executor } from '../../db/database.js';
import type { CompanyContext, UserCaller } from '../../http/caller.js';
import { AppErrors } from '../../http/errors.js';
import type { PageOf } from '../../http/schemas.js';
import type { Clock } from '../../lib/clock.js';
import type { CoherentCache } from '../../lib/coherent-cache.js';
import { hasRole, type Role } from '../../lib/roles.js';
import { generateSecret, hashSecret, secretHint } from '../../lib/secrets.js';
import type { Mailer } from '../../ports/mailer.js';
import * as repo from './companies.repo.js';
import type { Company, CreateCompanyBody, Invitation, Member, UpdateCompanyBody } from './companies.schemas.js';

export interface CompaniesDeps {
  db: Db;
  mailer: Mailer;
  clock: Clock;
  invitationTtlDays: number;
  publicBaseUrl: string;
  /** Called after any change to memberships, roles or active companies (drops cached callers). */
  credentialsChanged: () => void;
  /** Company records by id, dropped on every instance when a company changes. */
  companyRecords: CoherentCache<Company>;
}

type CompanyRow = NonNullable<Awaited<ReturnType<typeof repo.findCompany>>>;

export function toCompany(row: CompanyRow): Company {
  return {
    id: row.id,
    name: row.name,
    industry: row.industry,
    contact_email: row.contact_email,
    contact_phone: row.contact_phone,
    address: row.address,
    website: row.website,
    working_hours: row.working_hours,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function toMember(row: repo.MemberRow): Member {
  return {
    id: row.id,
    user_id: row.user_id,
    company_id: row.company_id,
    role: row.role,
    joined_at: row.joined_at.toISOString(),
    user: { id: row.user_id, email: row.email, first_name: row.first_name, last_name: row.last_name },
  };
}

function toInvitation(
  row: {
    id: string;
    email: string;
    role: Role;
    message: string;
    status: Invitation['status'];
    token_hint: string;
    expires_at: Date;
    created_at: Date;
  },
  token?: string,
): Invitation {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    message: row.message,
    status: row.status,
    token: token ?? row.token_hint,
    expires_at: row.expires_at.toISOString(),
    created_at: row.created_at.toISOString(),
  };
}

function requireAdmin(context: CompanyContext, what: string) {
  if (!hasRole(context.role, 'admin')) {
    throw AppErrors.forbidden(`${what} needs the admin role; your role is ${context.role}`);
  }
}

export function createCompaniesService(deps: CompaniesDeps) {
  const { db, clock } = deps;
  /** Runs a change to who-may-do-what, then drops this instance's cached callers. */
  const changing = <T>(work: Promise<T>): Promise<T> => work.finally(deps.credentialsChanged);

  async function addMemberWithin(
    executor: Executor,
    context: CompanyContext,
    userId: string,
    role: Role,
  ): Promise<Member> {
    if (role === 'owner' && context.role !== 'owner') throw AppErrors.forbidden('Only an owner can add an owner');
    // A user out of the caller's reach answers like an unknown id, so ids cannot be probed.
    if (!(await repo.findEnrollableUser(executor, context.companyId, context.userId, userId))) {
      throw AppErrors.notFound('User', userId);
    }
    return toMember(await repo.insertMember(executor, { company_id: context.companyId, user_id: userId, role }));
  }

  function invitationMail(company: string, invitation: Invitation, token: string, message: string) {
    const lines = [
      `You have been invited to join ${company} on Switchboard as ${invitation.role}.`,
      ...(message ? ['', message] : []),
      '',
      `Your invitation token: ${token}`,
      `It expires at ${invitation.expires_at}.`,
      '',
      'To accept in the console (and choose a password if you have none yet), open:',
      `  ${deps.publicBaseUrl}/console/#/accept?token=${encodeURIComponent(token)}`,
      '',
      'Or call the API with your own API key:',
      `  curl -X POST ${deps.publicBaseUrl}/api/public/companies/invitations/accept \\`,
      `    -H 'x-api-key: <your key>' -H 'content-type: application/json' -d '{"token":"${token}"}'`,
    ];
    return lines.join('\n');
  }

  /**
   * Accepts a pending invitation for the user `resolveUser` names, given the invited e-mail inside
   * the transaction (the caller, or a person signing up with a password, identity's sign-in).
   */
  async function acceptInvitationAs(
    token: string,
    resolveUser: (trx: Executor, email: string) => Promise<{ userId: string; activeCompanyId: string | null }>,
  ): Promise<{ company: Company; member: Member }> {
    const now = clock.now();
    const outcome = await changing(
      db.transaction().execute(async (trx) => {
        const invitation = await repo.findInvitationByTokenForUpdate(trx, hashSecret(token));
        if (!invitation) throw AppErrors.notFound('Invitation');
        if (invitation.status === 'pending' && invitation.expires_at <= now) {
          // Recorded, then reported once the transaction has committed.
          await repo.setInvitationStatus(trx, invitation.id, 'expired');
          return { expiredAt: invitation.expires_at.toISOString() };
        }
        if (invitation.status !== 'pending') {
          throw AppErrors.badRequest(
            invitation.status === 'accepted'
              ? 'This invitation has already been used'
              : `This invitation is ${invitation.status}`,
          );
        }
        const user = await resolveUser(trx, invitation.email);
        const member = await repo.insertMember(trx, {
          company_id: invitation.company_id,
          user_id: user.userId,
          role: invitation.role,
        });
        await repo.setInvitationStatus(trx, invitation.id, 'accepted', user.userId);
        if (!user.activeCompanyId) await repo.setActiveCompany(trx, user.userId, invitation.company_id);
        const company = (await repo.findCompany(trx, invitation.company_id))!;
        return { company: toCompany(company), member: toMember(member) };
      }),
    );
    if ('expiredAt' in outcome) throw AppErrors.badRequest(`This invitation expired at ${outcome.expiredAt}`);
    return outcome;
  }

  return {
    addMemberWithin,

    /** Any user may create a company; they become its owner (and it becomes active if they had none). */
    async create(caller: UserCaller, body: CreateCompanyBody): Promise<Company> {
      return changing(
        db.transaction().execute(async (trx) => {
          const company = await repo.insertCompany(trx, body);
          await repo.insertMember(trx, { company_id: company.id, user_id: caller.userId, role: 'owner' });
          if (!caller.companyId) await repo.setActiveCompany(trx, caller.userId, company.id);
          return toCompany(company);
        }),
      );
    },

    async list(caller: UserCaller, skip: number, limit: number): Promise<PageOf<Company>> {
      const { rows, total } = await repo.listCompaniesOfUser(db, caller.userId, skip, limit);
      return { data: rows.map(toCompany), total, skip, limit };
    },

    async current(context: CompanyContext): Promise<Company> {
      const cached = deps.companyRecords.get(context.companyId);
      if (cached) return cached;
      const generation = deps.companyRecords.generation;
      const row = await repo.findCompany(db, context.companyId);
      if (!row) throw AppErrors.notFound('Company');
      const company = toCompany(row);
      deps.companyRecords.set(context.companyId, company, generation);
      return company;
    },

    async update(context: CompanyContext, body: UpdateCompanyBody): Promise<Company> {
      requireAdmin(context, 'Updating the company');
      const company = await repo.updateCompany(db, context.companyId, body).finally(() => deps.companyRecords.clear());
      if (!company) throw AppErrors.notFound('Company');
      return toCompany(company);
    },

    /** Makes one of the caller's companies active; a company they do not belong to is a 404. */
    async switchTo(caller: UserCaller, companyId: string): Promise<Company> {
      const membership = await repo.findMembership(db, companyId, caller.userId);
      const company = membership ? await repo.findCompany(db, companyId) : undefined;
      if (!company) throw AppErrors.notFound('Company', companyId);
      await changing(repo.setActiveCompany(db, caller.userId, companyId));
      return toCompany(company);
    },

    async addMember(context: CompanyContext, userId: string, role: Role): Promise<Member> {
      requireAdmin(context, 'Adding members');
      return changing(addMemberWithin(db, context, userId, role));
    },

    async listMembers(context: CompanyContext, skip: number, limit: number): Promise<PageOf<Member>> {
      const { rows, total } = await repo.listMembers(db, context.companyId, null, skip, limit);
      return { data: rows.map(toMember), total, skip, limit };
    },

    async listAdmins(context: CompanyContext, skip: number, limit: number): Promise<PageOf<Member>> {
      const { rows, total } = await repo.listMembers(db, context.companyId, ['owner', 'admin'], skip, limit);
      return { data: rows.map(toMember), total, skip, limit };
    },

    /** Makes a user an administrator: promotes a member, or adds a non-member as admin. */
    async addAdmin(context: CompanyContext, userId: string): Promise<{ member: Member; created: boolean }> {
      requireAdmin(context, 'Adding administrators');
      return changing(
        db.transaction().execute(async (trx) => {
          const existing = await repo.findMembership(trx, context.companyId, userId);
          if (!existing) {
            return { member: await addMemberWithin(trx, context, userId, 'admin'), created: true };
          }
          if (hasRole(existing.role, 'admin')) {
            throw AppErrors.conflict(`User ${userId} is already an administrator (${existing.role})`);
          }
          await repo.setMemberRole(trx, context.companyId, existing.id, 'admin');
          return { member: toMember((await repo.findMember(trx, context.companyId, existing.id))!), created: false };
        }),
      );
    },

    async removeMember(context: CompanyContext, memberId: string): Promise<void> {
      await changing(
        db.transaction().execute(async (trx) => {
          const member = await repo.findMember(trx, context.companyId, memberId);
          if (!member) throw AppErrors.notFound('Member', memberId);
          const self = member.user_id === context.userId;
          if (!self) requireAdmin(context, 'Removing other members');
          if (member.role === 'owner') {
            if (!self && context.role !== 'owner') throw AppErrors.forbidden('Only an owner can remove an owner');
            if ((await repo.lockOwners(trx, context.companyId)) <= 1) {
              throw AppErrors.conflict('The last owner of a company cannot be removed');
            }
          }
          await repo.deleteMember(trx, context.companyId, memberId);
          await repo.moveActiveCompanyOff(trx, member.user_id, context.companyId);
        }),
      );
    },

    async invite(context: CompanyContext, input: { email: string; role: Role; message: string }): Promise<Invitation> {
      requireAdmin(context, 'Inviting members');
      const email = input.email.toLowerCase();
      const now = clock.now();
      const token = generateSecret('inv_');
      const { invitation, companyName } = await db.transaction().execute(async (trx) => {
        if (await repo.findMembershipByEmail(trx, context.companyId, email)) {
          throw AppErrors.conflict(`${email} is already a member of this company`);
        }
        await repo.expireInvitations(trx, context.companyId, now);
        const company = await repo.findCompany(trx, context.companyId);
        if (!company) throw AppErrors.notFound('Company');
        const row = await repo.insertInvitation(trx, {
          company_id: context.companyId,
          email,
          role: input.role,
          message: input.message,
          token_hash: hashSecret(token),
          token_hint: secretHint(token),
          invited_by: context.userId,
          expires_at: new Date(now.getTime() + deps.invitationTtlDays * 86_400_000),
        });
        return { invitation: toInvitation(row, token), companyName: company.name };
      });
      // Sent after the commit: no network call inside a transaction. The mailer keeps what it cannot send.
      await deps.mailer.send({
        to: email,
        subject: `Invitation to join ${companyName} on Switchboard`,
        text: invitationMail(companyName, invitation, token, input.message),
        kind: 'invitation',
        companyId: context.companyId,
      });
      return invitation;
    },

    async listInvitations(context: CompanyContext, skip: number, limit: number): Promise<PageOf<Invitation>> {
      await repo.expireInvitations(db, context.companyId, clock.now());
      const { rows, total } = await repo.listPendingInvitations(db, context.companyId, skip, limit);
      return { data: rows.map((row) => toInvitation(row)), total, skip, limit };
    },

    async revokeInvitation(context: CompanyContext, invitationId: string): Promise<void> {
      requireAdmin(context, 'Revoking invitations');
      if (!(await repo.revokeInvitation(db, context.companyId, invitationId))) {
        throw AppErrors.notFound('Pending invitation', invitationId);
      }
    },

    /** Accepts an invitation sent to the caller's e-mail: the caller joins with the invited role. */
    async acceptInvitation(caller: UserCaller, token: string): Promise<{ company: Company; member: Member }> {
      return acceptInvitationAs(token, async (_trx, email) => {
        if (email.toLowerCase() !== caller.email.toLowerCase()) {
          throw AppErrors.forbidden('This invitation was sent to another e-mail address');
        }
        return { userId: caller.userId, activeCompanyId: caller.companyId };
      });
    },

    acceptInvitationAs,
  };
}

export type CompaniesService = ReturnType<typeof createCompaniesService>;
