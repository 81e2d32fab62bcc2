// The request half of an AdmissionReview (admission.k8s.io/v1): helpers
// over the plain `request` object the host sends.

import { nameOrGenerateName } from './object.js';

/** `<resource>.<group>`, or `<resource>` for the core group (GroupResource.String()). */
export function groupResource(group, resource) {
  return group ? `${resource}.${group}` : resource;
}

/** The request's subresource, "" when none. */
export function subresource(request) {
  return request.subResource ?? '';
}

/** True for CREATE and UPDATE. */
export function isWrite(request) {
  return request.operation === 'CREATE' || request.operation === 'UPDATE';
}

/** True when the request is about `group`/`resource` itself (not a subresource). */
export function isResource(request, group, resource) {
  const r = request.resource ?? {};
  return (r.group ?? '') === group && r.resource === resource && subresource(request) === '';
}

/**
 * The object being created or updated when the request writes `group/resource`
 * itself (not a subresource); with no arguments, any resource. undefined otherwise.
 */
export function writtenObject(request, group, resource) {
  const about = group === undefined ? subresource(request) === '' : isResource(request, group, resource);
  return isWrite(request) && about ? request.object ?? undefined : undefined;
}

/**
 * The name kube's admission errors use: the object's name, else its
 * generateName, else the request's name, else "Unknown".
 */
export function objectName(request) {
  const fromObject = request.object ? nameOrGenerateName(request.object) : undefined;
  return fromObject ?? (request.name ? request.name : 'Unknown');
}
