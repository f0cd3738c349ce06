/**
 * Test data written through the repositories the platform itself uses: a fresh company per
 * test, users with a role in it, and their credentials.
 */
import { randomUUID } from 'node:crypto';
import type { Container } from '../../src/container.js';
import type { Role } from '../../src/lib/roles.js';
import { generateSecret, hashSecret, secretHint } from '../../src/lib/secrets.js';
import { insertCompany, insertMember, setActiveCompany } from '../../src/modules/companies/companies.repo.js';
import { insertApiKey, insertChatToken, insertUser } from '../../src/modules/identity/identity.repo.js';

export interface TestUser {
  userId: string;
  email: string;
  apiKey: string;
  headers: { 'x-api-key': string };
}

export interface TestTenant extends TestUser {
  companyId: string;
  /** Another user of this company with the given role. */
  member(role: Role): Promise<TestUser>;
  /** A chat token of this company (optionally bound to an agent). */
  chatToken(agentId?: string): Promise<{ token: string; headers: { 'x-api-token': string } }>;
}

export function uniqueEmail(prefix = 'user'): string {
  return `${prefix}-${randomUUID().slice(0, 8)}@example.test`;
}

/** A user with an API key; with a company, also a member of it (active) with `role`. */
export async function createUser(
  container: Container,
  companyId: string | null,
  role: Role = 'member',
  email = uniqueEmail(role),
): Promise<TestUser> {
  const apiKey = generateSecret('sk_');
  const user = await container.db.transaction().execute(async (trx) => {
    const row = await insertUser(trx, { email, first_name: role, last_name: 'Tester' });
    if (companyId) {
      await insertMember(trx, { company_id: companyId, user_id: row.id, role });
      await setActiveCompany(trx, row.id, companyId);
    }
    await insertApiKey(trx, {
      user_id: row.id,
      name: 'test',
      key_hash: hashSecret(apiKey),
      key_hint: secretHint(apiKey),
    });
    return row;
  });
  return { userId: user.id, email, apiKey, headers: { 'x-api-key': apiKey } };
}

/** A new company whose first user has `role` (owner by default). */
export async function createTenant(
  container: Container,
  role: Role = 'owner',
  name = `Company ${randomUUID().slice(0, 8)}`,
): Promise<TestTenant> {
  const company = await insertCompany(container.db, { name });
  const owner = await createUser(container, company.id, role);
  return {
    ...owner,
    companyId: company.id,
    member: (memberRole) => createUser(container, company.id, memberRole),
    async chatToken(agentId) {
      const token = generateSecret('ct_');
      await insertChatToken(container.db, {
        company_id: company.id,
        agent_id: agentId ?? null,
        name: 'test',
        token_hash: hashSecret(token),
        token_hint: secretHint(token),
        created_by: owner.userId,
      });
      return { token, headers: { 'x-api-token': token } };
    },
  };
}
