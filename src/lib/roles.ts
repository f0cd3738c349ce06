/** Company roles and their order: each role has the rights of the ones below it. */

/** A role in a company. */
export type Role = 'owner' | 'admin' | 'developer' | 'member';

export const ROLES = ['owner', 'admin', 'developer', 'member'] as const satisfies readonly Role[];

const RANK: Record<Role, number> = { member: 0, developer: 1, admin: 2, owner: 3 };

export function hasRole(actual: Role | null | undefined, required: Role): boolean {
  return actual != null && RANK[actual] >= RANK[required];
}
