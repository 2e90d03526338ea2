'use strict'
/** Facts shared by the host half, the client half's tests and the Python server. */

/** Where the Python plugin serves its panel, API and static files (fixed by the product). */
const ROUTE_PREFIX = '/plugins/dsh-task-gantt'
/** The header carrying the per-boot secret (the Python side's PROXY_HEADER, lower-cased). */
const PROXY_HEADER = 'x-dsh-task-gantt-proxy'
/** What a session id may look like (the Python side's rule). */
const SESSION_ID = /^[A-Za-z0-9._-]{1,128}$/

module.exports = { ROUTE_PREFIX, PROXY_HEADER, SESSION_ID }
