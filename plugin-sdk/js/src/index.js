// @capstan/plugin-sdk: write Capstan plugins in JavaScript/TypeScript.
// The ABI is the WIT package capstan:plugin@0.1.0 (plugin-sdk/wit/capstan.wit).

export { AdmissionResponse } from './response.js';
export { JsonPatch, diff, escape, pointer } from './patch.js';
export { groupResource, isResource, isWrite, objectName, subresource, writtenObject } from './review.js';
export { Level, config, getObject, listObjects, log, useHost, watermark } from './host.js';
export { runAdmission, runJson, WORLDS } from './plugin.js';
export * as object from './object.js';

import { AdmissionResponse } from './response.js';

/** Admits the request unchanged (`AdmissionResponse.allow()`). */
export const allow = () => AdmissionResponse.allow();
/** A Failure response with `code`, `reason` and `message` (`AdmissionResponse.deny`). */
export const deny = (code, reason, message) => AdmissionResponse.deny(code, reason, message);
/** kube's Forbidden: 403, `<resource> "<name>" is forbidden: <message>`. */
export const forbidden = (request, message) => AdmissionResponse.forbidden(request, message);
/** kube's NotFound: 404, `<resource> "<name>" not found`. */
export const notFound = (group, resource, name) => AdmissionResponse.notFound(group, resource, name);

/** The ABI this SDK is built against. */
export const ABI_VERSION = '0.1.0';
