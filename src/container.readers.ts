/** Helpers of the container's readers: the platform reading a company's resources as its owner. */
import { AppError } from './http/errors.js';

/** The context of the platform reading a company's resources (as its owner would see them). */
export function systemReader(companyId: string) {
  return { companyId, userId: '00000000-0000-0000-0000-000000000000', role: 'owner' as const };
}

/** The value, or null when the resource is gone (a 404). */
export async function orNull<T>(read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof AppError && error.statusCode === 404) return null;
    throw error;
  }
}
