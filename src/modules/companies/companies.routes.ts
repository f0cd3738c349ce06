import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { companyContext, requireRole, userCaller } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { SkipLimit, Uuid } from '../../http/schemas.js';
import type { CompaniesService } from './companies.service.js';
import {
  AcceptedInvitation,
  AcceptInvitationBody,
  AddAdminBody,
  AddMemberBody,
  Company,
  CompanyPage,
  CreateCompanyBody,
  CreateInvitationBody,
  Invitation,
  InvitationPage,
  Member,
  MemberPage,
  UpdateCompanyBody,
} from './companies.schemas.js';

const errors = errorResponses('detail-status');
const tags = ['companies'];
const ListQuery = Type.Object(SkipLimit(100, 1000));

export function companiesRoutes(companies: CompaniesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/companies',
      {
        schema: {
          operationId: 'createCompany',
          tags,
          summary: 'Create a company (the caller becomes its owner)',
          description:
            'Creates a company with the caller as its owner and makes it their active company. Only `name` is required.',
          body: CreateCompanyBody,
          response: { 201: Type.Ref(Company), ...errors },
        },
      },
      async (request, reply) => reply.code(201).send(await companies.create(userCaller(request), request.body)),
    );

    app.get(
      '/companies',
      {
        schema: {
          operationId: 'listCompanies',
          tags,
          summary: 'Companies the caller belongs to',
          description: 'Every company the caller is a member of.',
          querystring: ListQuery,
          response: { 200: CompanyPage, ...errors },
        },
      },
      async (request) => companies.list(userCaller(request), request.query.skip, request.query.limit),
    );

    app.get(
      '/companies/current',
      {
        schema: {
          operationId: 'getCurrentCompany',
          tags,
          summary: 'The active company',
          description: "The company the caller's requests act on (the active company).",
          response: { 200: Type.Ref(Company), ...errors },
        },
      },
      async (request) => companies.current(companyContext(request)),
    );

    app.put(
      '/companies',
      {
        preHandler: requireRole('admin'),
        schema: {
          operationId: 'updateCompany',
          tags,
          summary: 'Update the active company (admin)',
          description:
            "Changes the fields sent of the caller's active company; fields left out keep their value. Owners and admins only.",
          body: UpdateCompanyBody,
          response: { 200: Type.Ref(Company), ...errors },
        },
      },
      async (request) => companies.update(companyContext(request), request.body),
    );

    app.post(
      '/companies/switch/:companyId',
      {
        schema: {
          operationId: 'switchCompany',
          tags,
          summary: "Make one of the caller's companies active",
          description:
            'Makes another company the caller is a member of their active company; later requests act on it.',
          params: Type.Object({ companyId: Uuid() }),
          response: { 200: Type.Ref(Company), ...errors },
        },
      },
      async (request) => companies.switchTo(userCaller(request), request.params.companyId),
    );

    app.post(
      '/companies/members',
      {
        preHandler: requireRole('admin'),
        schema: {
          operationId: 'addCompanyMember',
          tags,
          summary: 'Add an existing user as a member (admin)',
          description:
            'Adds an existing user to the active company with a role (default `member`). Answers 409 when the user is already a member.',
          body: AddMemberBody,
          response: { 201: Type.Ref(Member), ...errors },
        },
      },
      async (request, reply) => {
        const member = await companies.addMember(
          companyContext(request),
          request.body.user_id,
          request.body.role ?? 'member',
        );
        return reply.code(201).send(member);
      },
    );

    app.get(
      '/companies/members',
      {
        schema: {
          operationId: 'listCompanyMembers',
          tags,
          summary: 'Members of the active company',
          description: 'Members of the active company with their role, join date and user.',
          querystring: ListQuery,
          response: { 200: MemberPage, ...errors },
        },
      },
      async (request) => companies.listMembers(companyContext(request), request.query.skip, request.query.limit),
    );

    app.delete(
      '/companies/members/:memberId',
      {
        schema: {
          operationId: 'removeCompanyMember',
          tags,
          summary: 'Remove a member (admin; anyone may remove themselves)',
          description:
            'Removes a membership from the active company. Admins remove members, only owners remove owners, the last owner cannot be removed (409); anyone may remove themselves.',
          params: Type.Object({ memberId: Uuid() }),
          response: { 204: Type.Null(), ...errors },
        },
      },
      async (request, reply) => {
        await companies.removeMember(companyContext(request), request.params.memberId);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/companies/admins',
      {
        preHandler: requireRole('admin'),
        schema: {
          operationId: 'addCompanyAdmin',
          tags,
          summary: 'Make a user an administrator (admin): 201 when added, 200 when promoted',
          description:
            'Gives a user the admin role in the active company, adding them as a member first when they are not one.',
          body: AddAdminBody,
          response: { 200: Type.Ref(Member), 201: Type.Ref(Member), ...errors },
        },
      },
      async (request, reply) => {
        const { member, created } = await companies.addAdmin(companyContext(request), request.body.user_id);
        return reply.code(created ? 201 : 200).send(member);
      },
    );

    app.get(
      '/companies/admins',
      {
        schema: {
          operationId: 'listCompanyAdmins',
          tags,
          summary: 'Owners and admins of the active company',
          description: 'Members of the active company whose role is owner or admin.',
          querystring: ListQuery,
          response: { 200: MemberPage, ...errors },
        },
      },
      async (request) => companies.listAdmins(companyContext(request), request.query.skip, request.query.limit),
    );

    app.post(
      '/companies/invitations',
      {
        preHandler: requireRole('admin'),
        schema: {
          operationId: 'createCompanyInvitation',
          tags,
          summary: 'Invite someone by e-mail (admin); the token is returned once and e-mailed',
          description:
            'Creates a pending invitation and e-mails its token. The token is in this response only; the invitation expires after INVITATION_TTL_DAYS.',
          body: CreateInvitationBody,
          response: { 201: Type.Ref(Invitation), ...errors },
        },
      },
      async (request, reply) => {
        const { email, role, message } = request.body;
        return reply
          .code(201)
          .send(
            await companies.invite(companyContext(request), { email, role: role ?? 'member', message: message ?? '' }),
          );
      },
    );

    app.get(
      '/companies/invitations',
      {
        schema: {
          operationId: 'listCompanyInvitations',
          tags,
          summary: 'Pending invitations of the active company',
          description: 'Invitations of the active company that are still pending and not expired.',
          querystring: ListQuery,
          response: { 200: InvitationPage, ...errors },
        },
      },
      async (request) => companies.listInvitations(companyContext(request), request.query.skip, request.query.limit),
    );

    app.delete(
      '/companies/invitations/:invitationId',
      {
        preHandler: requireRole('admin'),
        schema: {
          operationId: 'revokeCompanyInvitation',
          tags,
          summary: 'Revoke a pending invitation (admin)',
          description: 'Revokes a pending invitation so that its token can no longer be accepted.',
          params: Type.Object({ invitationId: Uuid() }),
          response: { 204: Type.Null(), ...errors },
        },
      },
      async (request, reply) => {
        await companies.revokeInvitation(companyContext(request), request.params.invitationId);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/companies/invitations/accept',
      {
        schema: {
          operationId: 'acceptCompanyInvitation',
          tags,
          summary: "Accept an invitation sent to the caller's e-mail",
          description:
            "Accepts an invitation with the token from the e-mail. The invitation must be addressed to the caller's e-mail; the caller joins with the invited role.",
          body: AcceptInvitationBody,
          response: { 200: AcceptedInvitation, ...errors },
        },
      },
      async (request) => companies.acceptInvitation(userCaller(request), request.body.token),
    );
  };
}
