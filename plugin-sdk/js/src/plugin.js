// The dispatchers that turn a world's JSON text into values for the
// policy's function and its answer back into JSON text. The build's
// generated entry exports them as the world's function; tests can call them
// with the same JSON the host would send.

import { AdmissionResponse } from './response.js';

function parse(what, text) {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`invalid ${what}: ${e.message}`);
  }
}

/**
 * AdmissionReview JSON in, AdmissionReview JSON out: calls `review(request)`
 * (which returns an `AdmissionResponse`, or a promise of one), sets
 * response.uid to request.uid and echoes apiVersion ("admission.k8s.io/v1"
 * when absent); synchronous unless `review` returns a promise. A thrown error means "could not decide": the host applies
 * the plugin's failurePolicy.
 */
export function runAdmission(review, text) {
  const envelope = parse('AdmissionReview', text);
  const request = envelope.request;
  if (!request) throw new Error('AdmissionReview has no request');
  const answer = review(request);
  return typeof answer?.then === 'function'
    ? answer.then((r) => render(envelope, request, r))
    : render(envelope, request, answer);
}

function render(envelope, request, response) {
  if (!(response instanceof AdmissionResponse)) {
    throw new Error('review must return an AdmissionResponse (allow(), forbidden(...), ...)');
  }
  response.uid = request.uid ?? '';
  return JSON.stringify({
    apiVersion: envelope.apiVersion ?? 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response,
  });
}

/**
 * The other worlds (authenticator, authorizer, strategy, converter): the
 * input parsed, `fn(input)` called, its answer (the whole review with
 * `status`/`response` set, as the WIT file describes) serialized.
 */
export function runJson(fn, what, text) {
  const answer = fn(parse(what, text));
  return typeof answer?.then === 'function' ? answer.then((a) => JSON.stringify(a)) : JSON.stringify(answer);
}

/** Each world's export and what its input is called. */
export const WORLDS = Object.freeze({
  admission: { exportName: 'review', input: 'AdmissionReview' },
  authenticator: { exportName: 'authenticate', input: 'TokenReview' },
  authorizer: { exportName: 'authorize', input: 'SubjectAccessReview' },
  strategy: { exportName: 'call', input: 'strategy call' },
  converter: { exportName: 'convert', input: 'ConversionReview' },
});
