import { expect } from 'chai';

/** The error `promise` rejects with, checked to be a `type` (the test fails if it resolves or rejects with anything else). */
export async function rejected<T>(promise: Promise<unknown>, type: abstract new (...args: never[]) => T): Promise<T> {
  const outcome = await promise.then((value: unknown) => ({ value }), (error: unknown) => ({ error }));
  expect(outcome, 'expected a rejection').to.have.property('error');
  const { error } = outcome as { error: unknown };
  expect(error).to.be.instanceOf(type);
  return error as T;
}
