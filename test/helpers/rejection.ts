import { expect } from 'vitest';
import { ClaimError } from '../../src/core/claimError.js';

/** The ClaimError a promise rejects with; fails the test when it resolves or rejects with anything else. */
export async function rejection(promise: Promise<unknown>): Promise<ClaimError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ClaimError);
    return error as ClaimError;
  }
  throw new Error('expected a ClaimError, the promise resolved');
}
