/**
 * The companies module's surface: the service and routes the container and the app mount, the
 * schemas other families reference, and the membership rows that identity's bootstrap, its
 * `users/me` and the CLI write or read inside their own transactions.
 */
export { findMembership, insertCompany, insertMember, listMemberships, setActiveCompany } from './companies.repo.js';
export { companiesRoutes } from './companies.routes.js';
export { Company, Invitation, Member, RoleSchema } from './companies.schemas.js';
export { createCompaniesService, type CompaniesService } from './companies.service.js';
