/**
 * The identity module's surface: users, API keys and chat tokens (service and routes), people
 * signing in (passwords, sessions, reset links), the
 * first-start bootstrap the server runs, and the user rows the CLI mints keys for.
 */
export { bootstrap, describeBootstrap } from './identity.bootstrap.js';
export { findUserByEmail, insertApiKey, insertUser } from './identity.repo.js';
export { identityRoutes } from './identity.routes.js';
export { ApiKey, ChatToken, User } from './identity.schemas.js';
export { sessionRoutes, signInRoutes } from './identity.sign-in.routes.js';
export { createSignInService, type SignInService } from './identity.sign-in.service.js';
export { createIdentityService, type IdentityService } from './identity.service.js';
