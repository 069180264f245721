// Browser end-to-end test of the developer console (`/console`), driven by playwright-core against
// Debian's Chromium. See README.md in this folder.
//
// Environment:
//   BASE_URL        the running api-server (embedded worker, local engines), e.g. http://127.0.0.1:8080
//   SCREENSHOT_DIR  where the PNGs go (created); default ./screenshots
//   SERVER_LOG      the server's combined stdout/stderr log (optional): must not carry a secret
//   CHROMIUM        the browser binary; default /usr/bin/chromium
//
// Exits 0 when every step passes; otherwise prints the failing step and why, saves failure.png and
// exits 1. Every wait is bounded, and a watchdog ends the run if it ever takes too long.

import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

const BASE_URL = (process.env.BASE_URL || '').replace(/\/+$/, '');
const SCREENSHOT_DIR = path.resolve(process.env.SCREENSHOT_DIR || 'screenshots');
const SERVER_LOG = process.env.SERVER_LOG || '';
const MAIL_DIR = process.env.MAIL_DIR || '';
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

/** Timeouts (ms). */
const ACTION_TIMEOUT = 10_000; // one page action, navigation or HTTP request
const JOB_TIMEOUT = 60_000; // the generation job
const POLL_INTERVAL = 500;
const WATCHDOG = 180_000; // the whole run, whatever happens

/** A cheap local text-to-image engine: 0.003 USD per megapixel, so 512x512 costs 0.0008 USD. */
const ENGINE = 'alpha-schnell';
const GENERATE_BODY = {
  model: ENGINE,
  prompt: 'console e2e check: a lighthouse at dusk',
  params: { width: 512, height: 512, seed: 7 },
};

const MCP_PROTOCOL_VERSION = '2025-11-25';
const MCP_SUPPORTED_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'];

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

const PASSWORD = 'correct horse battery staple';
const EMAIL = `e2e-${Date.now()}-${process.pid}@example.com`;
const KEY_LABEL = 'e2e key';
const PHONE_KEY_LABEL = 'e2e phone key';

/** What the steps learn, shared between them. */
const state = {
  browser: null,
  desktop: null, // { context, page }
  phone: null,
  current: null, // the page a failure screenshot is taken of
  secret: null,
  prefix: null,
  keyId: null,
  connectorUrl: null,
  clipboardConnectorUrl: null,
  phoneSecret: null,
  taskId: null,
  costUsd: null,
  mcpSession: null, // an Mcp-Session-Id, if the connector ever issues one
  pageErrors: [],
  accessibilityChecked: new Set(),
};

// ---------------------------------------------------------------------------------------------
// Helpers

function log(message) {
  console.log(message);
}

/** Path of a console page. */
function url(pathname) {
  return `${BASE_URL}${pathname}`;
}

/** Waits until `page` is on `pathname` of the service (any query string). */
async function expectPath(page, pathname, what) {
  try {
    await page.waitForURL((u) => u.origin === new URL(BASE_URL).origin && u.pathname === pathname, {
      timeout: ACTION_TIMEOUT,
      waitUntil: 'load',
    });
  } catch {
    assert.fail(`${what}: expected to be on ${pathname}, but the page is at ${page.url()}`);
  }
}

/** Retries `check` (which returns a truthy value when done) until it holds or `timeout` passes. */
async function waitFor(what, check, timeout = ACTION_TIMEOUT, interval = 100) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() >= deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      assert.fail(`${what} (gave up after ${timeout} ms; last: ${detail})`);
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

/** Asserts `locator` becomes visible. */
async function expectVisible(locator, what) {
  try {
    await locator.first().waitFor({ state: 'visible', timeout: ACTION_TIMEOUT });
  } catch {
    assert.fail(`${what} is not visible`);
  }
}

/** `textContent` of the single element `locator` matches, trimmed. */
async function text(locator, what) {
  const count = await locator.count();
  assert.equal(count, 1, `${what}: expected exactly one element, found ${count}`);
  return ((await locator.textContent({ timeout: ACTION_TIMEOUT })) || '').trim();
}

async function screenshot(page, name) {
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true, timeout: ACTION_TIMEOUT });
  log(`    screenshot ${file}`);
  // A page wider than the viewport scrolls sideways, which on a phone hides half of it; wide
  // tables scroll inside their own box instead.
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  const viewport = page.viewportSize()?.width;
  assert.ok(!viewport || width <= viewport, `${name} is ${width} px wide, wider than the ${viewport} px viewport`);
}

/** fetch with a timeout. */
function fetchWithTimeout(target, init = {}) {
  return fetch(target, { ...init, signal: AbortSignal.timeout(ACTION_TIMEOUT), redirect: 'manual' });
}

async function readJson(response, what) {
  const body = await response.text();
  try {
    return JSON.parse(body);
  } catch {
    assert.fail(`${what}: expected a JSON body, got ${response.status} ${JSON.stringify(body.slice(0, 300))}`);
  }
}

/** Reads the clipboard in the page until it equals `expected`. */
async function expectClipboard(page, expected, what) {
  await waitFor(`${what}: clipboard should hold ${JSON.stringify(expected)}`, async () => {
    const value = await page.evaluate(() => navigator.clipboard.readText());
    return value === expected;
  });
}

/** Parses a money text such as `$0.0300` or `0.0300` into a number. */
function money(textValue, what) {
  const match = /-?\d+(?:\.\d+)?/.exec(textValue.replace(/,/g, ''));
  assert.ok(match, `${what}: no amount in ${JSON.stringify(textValue)}`);
  return Number(match[0]);
}

/** A new browser context (desktop or phone) with clipboard access for the service's origin. */
async function newContext(kind) {
  const options =
    kind === 'phone'
      ? { viewport: PHONE, isMobile: true, hasTouch: true }
      : { viewport: DESKTOP };
  const context = await state.browser.newContext({ ...options, baseURL: BASE_URL });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(BASE_URL).origin });
  context.setDefaultTimeout(ACTION_TIMEOUT);
  context.setDefaultNavigationTimeout(ACTION_TIMEOUT);
  const page = await context.newPage();
  page.on('pageerror', (error) => {
    state.pageErrors.push(`[${kind}] ${page.url()}: ${error.message}`);
    log(`    [${kind}] page error on ${page.url()}: ${error.message}`);
  });
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    log(`    [${kind}] browser console error on ${page.url()}: ${message.text()}`);
    // A refused form answers 4xx on purpose; anything else (a blocked style or script, a
    // missing asset) is a defect of the page.
    if (!/Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())) {
      state.pageErrors.push(`[${kind}] ${page.url()}: ${message.text()}`);
    }
  });
  state.current = page;
  return { context, page };
}

/**
 * Accessibility smoke check of the page as loaded (call it before interacting with the page, so
 * keyboard focus starts at the top): every form control has a label, and the first Tab focuses
 * something with a visible focus indicator.
 */
async function accessibilitySmoke(page, pageName) {
  const unlabelled = await page.evaluate(() => {
    const missing = [];
    const controls = document.querySelectorAll('input, select, textarea');
    for (const el of controls) {
      const type = (el.getAttribute('type') || '').toLowerCase();
      // Hidden inputs are not shown; buttons are labelled by their value.
      if (el.tagName === 'INPUT' && ['hidden', 'submit', 'button', 'reset', 'image'].includes(type)) continue;
      const byLabel = [...(el.labels || [])].some((label) => label.textContent.trim() !== '');
      const byAria = (el.getAttribute('aria-label') || '').trim() !== '';
      const byLabelledBy = (el.getAttribute('aria-labelledby') || '')
        .split(/\s+/)
        .filter(Boolean)
        .some((id) => (document.getElementById(id)?.textContent || '').trim() !== '');
      if (!byLabel && !byAria && !byLabelledBy) {
        missing.push(el.outerHTML.slice(0, 160));
      }
    }
    return missing;
  });
  assert.deepEqual(unlabelled, [], `${pageName}: form controls without a label or aria-label`);

  await page.keyboard.press('Tab');
  const focus = await page.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body || el === document.documentElement) return null;
    const style = getComputedStyle(el);
    const outlineVisible = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0;
    const shadowVisible = style.boxShadow !== 'none' && style.boxShadow !== '';
    return {
      element: `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className ? `.${String(el.className).trim().split(/\s+/).join('.')}` : ''}`,
      text: (el.textContent || el.getAttribute('aria-label') || '').trim().slice(0, 40),
      href: el.getAttribute('href'),
      outline: `${style.outlineStyle} ${style.outlineWidth}`,
      boxShadow: style.boxShadow,
      visible: outlineVisible || shadowVisible,
    };
  });
  assert.ok(focus, `${pageName}: pressing Tab from the top of the page focused nothing`);
  assert.ok(
    focus.visible,
    `${pageName}: the first focused element ${focus.element} has no visible focus indicator (outline ${focus.outline}, box-shadow ${focus.boxShadow})`,
  );
  state.accessibilityChecked.add(pageName);
  log(`    a11y ${pageName}: controls labelled; first Tab focuses ${focus.element} "${focus.text}" (outline ${focus.outline})`);
  // Leave the page as it was.
  await page.evaluate(() => document.activeElement?.blur());
}

/** The row of the key in `table#keys`. */
function keyRow(page, keyId) {
  return page.locator(`table#keys tr[data-key-id="${keyId}"]`);
}

/** POSTs one JSON-RPC message to an MCP connector URL; returns { response, message }. */
async function mcpPost(connectorUrl, message, protocolVersion) {
  const headers = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
  };
  if (protocolVersion) headers['MCP-Protocol-Version'] = protocolVersion;
  if (state.mcpSession) headers['Mcp-Session-Id'] = state.mcpSession;
  const response = await fetchWithTimeout(connectorUrl, { method: 'POST', headers, body: JSON.stringify(message) });
  const body = await response.text();
  let parsed = null;
  if (body !== '') {
    const type = response.headers.get('content-type') || '';
    if (type.startsWith('text/event-stream')) {
      // A server may answer with an event stream carrying the response as one `data:` event.
      const data = body
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
        .join('\n');
      parsed = JSON.parse(data);
    } else {
      try {
        parsed = JSON.parse(body);
      } catch {
        assert.fail(`MCP ${message.method}: ${response.status} with a body that is not JSON: ${body.slice(0, 300)}`);
      }
    }
  }
  return { response, message: parsed };
}

/** The last link starting with `prefix` in the mail to `to` written to MAIL_DIR. */
function mailedLink(to, prefix) {
  if (!MAIL_DIR) throw new Error('MAIL_DIR is not set: the console mail cannot be read');
  const messages = readdirSync(MAIL_DIR)
    .filter((name) => name.endsWith('.eml'))
    .sort()
    .map((name) => readFileSync(path.join(MAIL_DIR, name), 'utf8'))
    .filter((text) => text.includes(`\r\nTo: ${to}\r\n`));
  const wanted = `${BASE_URL}${prefix}`;
  for (const text of messages.reverse()) {
    const at = text.indexOf(wanted);
    if (at >= 0) return text.slice(at).split(/\s/)[0];
  }
  throw new Error(`no ${prefix} link was mailed to ${to}`);
}

// ---------------------------------------------------------------------------------------------
// Steps

async function step1_signedOutRedirect() {
  const { page } = state.desktop;
  await page.goto(url('/console'));
  await expectPath(page, '/console/sign-in', 'GET /console signed out');
  await expectVisible(page.locator('input[name=email]'), 'sign-in email field');
  await expectVisible(page.locator('input[name=password]'), 'sign-in password field');
  await accessibilitySmoke(page, 'sign-in');
  await screenshot(page, 'sign-in-desktop');

  await page.locator('a[href="/console/sign-up"]').first().click();
  await expectPath(page, '/console/sign-up', 'the sign-up link');
  await accessibilitySmoke(page, 'sign-up');
  await screenshot(page, 'sign-up-desktop');
}

async function step2_signUp() {
  const { page } = state.desktop;
  const form = page.locator('form:has(input[name=password])').first();

  // A too-short password: refused by the server, with an alert on the re-shown form. Browser-side
  // validation (e.g. `minlength`) is switched off so the server's answer is what is checked.
  await page.locator('input[name=email]').fill(EMAIL);
  await page.locator('input[name=password]').fill('short');
  await form.evaluate((f) => {
    f.noValidate = true;
  });
  await form.locator('button[type=submit]').click();
  await expectVisible(page.locator('[role=alert]'), 'the error ([role=alert]) for a too-short password');
  await expectPath(page, '/console/sign-up', 'after a too-short password');
  await expectVisible(page.locator('input[name=password]'), 'the sign-up form after the error');
  log(`    alert: ${JSON.stringify(((await page.locator('[role=alert]').first().textContent()) || '').trim())}`);
  await screenshot(page, 'sign-up-error-desktop');

  // The real sign-up.
  await page.locator('input[name=email]').fill(EMAIL);
  await page.locator('input[name=password]').fill(PASSWORD);
  await page.locator('form:has(input[name=password])').first().locator('button[type=submit]').click();
  await expectVisible(page.locator('#check-mail'), 'the "check your email" note after signing up');
  await screenshot(page, 'sign-up-check-mail-desktop');

  // The confirmation link from the mail, then its one button.
  const link = mailedLink(EMAIL, '/console/verify/');
  state.verifyToken = link.split('/').pop();
  await page.goto(link);
  await accessibilitySmoke(page, 'confirm address');
  await page.locator('button#confirm').click();
  await expectPath(page, '/console/keys', 'after confirming the address');
  log(`    signed up and confirmed ${EMAIL}`);
}

async function step3_createKey() {
  const { page } = state.desktop;
  await expectVisible(page.locator('form#create-key'), 'form#create-key');
  await accessibilitySmoke(page, 'keys');
  const form = page.locator('form#create-key');
  await form.locator('input[name=label]').fill(KEY_LABEL);
  await form.locator('input[name=spend_cap]').fill('5');
  await form.locator('[type=submit]').first().click();

  await expectVisible(page.locator('#new-key'), '#new-key after creating a key');
  const secret = await text(page.locator('code#secret'), 'code#secret');
  assert.match(secret, /^mgk_[0-9a-f]{64}$/, 'the new secret');
  state.secret = secret;
  state.prefix = secret.slice(0, 12);

  const connectorUrl = await text(page.locator('code#connector-url'), 'code#connector-url');
  assert.equal(connectorUrl, `${BASE_URL}/api/mcp?key=${secret}`, 'the connector URL');
  state.connectorUrl = connectorUrl;
  await expectVisible(page.locator('#connector-warning'), '#connector-warning');
  const curl = await text(page.locator('pre#curl-example'), 'pre#curl-example');
  assert.ok(curl.includes(secret), 'pre#curl-example should contain the secret');
  await expectPath(page, '/console/keys', 'the page showing the new key (history.replaceState)');
  await accessibilitySmoke(page, 'keys-with-new-secret');

  await page.locator('#copy-connector-url').click();
  await expectClipboard(page, connectorUrl, '#copy-connector-url');
  state.clipboardConnectorUrl = await page.evaluate(() => navigator.clipboard.readText());
  await page.locator('#copy-secret').click();
  await expectClipboard(page, secret, '#copy-secret');

  await screenshot(page, 'keys-with-new-secret-desktop');
  log(`    key ${state.prefix}… created; both copy buttons fill the clipboard`);
}

async function step4_reloadHidesSecret() {
  const { page } = state.desktop;
  await page.reload({ timeout: ACTION_TIMEOUT });
  await expectPath(page, '/console/keys', 'after reloading');
  assert.equal(await page.locator('#secret').count(), 0, '#secret must not exist after a reload');
  const html = await page.content();
  assert.ok(!html.includes(state.secret), 'the page must not contain the secret after a reload');

  const rows = page.locator('table#keys tr[data-key-id]').filter({ hasText: state.prefix });
  const count = await rows.count();
  assert.equal(count, 1, `table#keys: expected one row with prefix ${state.prefix}, found ${count}`);
  const row = rows.first();
  const rowText = (await row.textContent()) || '';
  assert.ok(rowText.includes(KEY_LABEL), `the key's row should show its label ${JSON.stringify(KEY_LABEL)}: ${rowText.trim()}`);
  const status = await text(row.locator('td.status'), 'the key row td.status');
  assert.equal(status.toLowerCase(), 'active', 'the new key status');
  state.keyId = await row.getAttribute('data-key-id');
  assert.ok(state.keyId, 'the key row has a data-key-id');

  // A reload must be a GET: a re-POST of the form would have made a second key.
  const labelled = await page.locator('table#keys tr[data-key-id]').filter({ hasText: KEY_LABEL }).count();
  assert.equal(labelled, 1, `expected exactly one key labelled ${JSON.stringify(KEY_LABEL)}, found ${labelled}`);

  await accessibilitySmoke(page, 'keys');
  await screenshot(page, 'keys-desktop');
  log(`    key id ${state.keyId}, status active, secret gone`);
}

async function step5_generateWithApi() {
  const auth = { Authorization: `Bearer ${state.secret}` };
  const response = await fetchWithTimeout(url('/v1/generate'), {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify(GENERATE_BODY),
  });
  const queued = await readJson(response, 'POST /v1/generate');
  assert.ok([200, 202].includes(response.status), `POST /v1/generate answered ${response.status}: ${JSON.stringify(queued)}`);
  assert.equal(typeof queued.id, 'string', `POST /v1/generate: no task id in ${JSON.stringify(queued)}`);
  assert.equal(typeof queued.poll_url, 'string', `POST /v1/generate: no poll_url in ${JSON.stringify(queued)}`);
  assert.ok(queued.poll_url.endsWith(`/v1/tasks/${queued.id}`), `poll_url ${queued.poll_url}`);
  state.taskId = queued.id;
  log(`    task ${queued.id} ${queued.status}, price ${queued.price_usd}`);

  const deadline = Date.now() + JOB_TIMEOUT;
  let task;
  for (;;) {
    const poll = await fetchWithTimeout(url(`/v1/tasks/${encodeURIComponent(queued.id)}`), { headers: auth });
    task = await readJson(poll, `GET /v1/tasks/${queued.id}`);
    assert.equal(poll.status, 200, `GET /v1/tasks/${queued.id} answered ${poll.status}: ${JSON.stringify(task)}`);
    if (task.status === 'succeeded') break;
    assert.notEqual(task.status, 'failed', `the task failed: ${task.error || JSON.stringify(task)}`);
    assert.ok(Date.now() < deadline, `the task is still ${task.status} after ${JOB_TIMEOUT / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL));
  }
  assert.equal(typeof task.cost_usd, 'string', `no cost_usd on the succeeded task: ${JSON.stringify(task)}`);
  assert.ok(Number.isFinite(money(task.cost_usd, 'cost_usd')), `cost_usd ${task.cost_usd}`);
  state.costUsd = task.cost_usd;
  log(`    task succeeded, cost ${task.cost_usd} USD`);
}

async function step5b_lowerRates() {
  const { page } = state.desktop;
  await page.goto(url('/console/keys'));
  const form = keyRow(page, state.keyId).locator('form.rates-form');
  await form.locator('input[name=reads_per_minute]').fill('2000');
  await form.locator('[type=submit]').click();
  await expectPath(page, '/console/keys', 'after setting the rates');
  const reads = keyRow(page, state.keyId).locator('input[name=reads_per_minute]');
  assert.equal(await reads.inputValue(), '2000', "the key's own read rate is shown");
  // The API enforces it at once: the answers' policy names the key's rate.
  const response = await fetchWithTimeout(url('/v1/usage'), { headers: { Authorization: `Bearer ${state.secret}` } });
  assert.equal(response.status, 200, 'GET /v1/usage after lowering the rates');
  assert.equal(response.headers.get('ratelimit-policy'), '2000;w=60;burst=333', 'RateLimit-Policy');
  log(`    reads lowered to 2000/min; the API answers with RateLimit-Policy ${response.headers.get('ratelimit-policy')}`);
}

async function step6_usagePage() {
  const { page } = state.desktop;
  await page.goto(url('/console/usage'));
  await expectPath(page, '/console/usage', 'GET /console/usage');
  await expectVisible(page.locator('svg#spend-chart'), 'svg#spend-chart');

  const row = page.locator(`table#recent-tasks tr[data-task-id="${state.taskId}"]`);
  assert.equal(await row.count(), 1, `table#recent-tasks should have one row for ${state.taskId}`);
  assert.equal((await text(row.locator('td.status'), 'the task row td.status')).toLowerCase(), 'succeeded', 'task status');
  assert.equal(await text(row.locator('td.model'), 'the task row td.model'), ENGINE, 'task model');
  const cost = await text(row.locator('td.cost'), 'the task row td.cost');
  assert.ok(cost.startsWith('$'), `td.cost should start with $: ${JSON.stringify(cost)}`);
  assert.ok(
    Math.abs(money(cost, 'td.cost') - money(state.costUsd, 'cost_usd')) < 1e-9,
    `td.cost ${JSON.stringify(cost)} should be the API's cost_usd ${state.costUsd}`,
  );

  const links = row.locator('a.output');
  assert.ok((await links.count()) >= 1, 'the task row should have at least one a.output link');
  const href = await links.first().getAttribute('href');
  assert.ok(href, 'a.output has an href');
  const output = await page.request.get(new URL(href, page.url()).toString(), { timeout: ACTION_TIMEOUT });
  assert.equal(output.status(), 200, `GET of the output link ${href} answered ${output.status()}`);
  const type = output.headers()['content-type'] || '';
  assert.ok(type.startsWith('image/'), `the output link's content type is ${JSON.stringify(type)}, expected an image`);

  await accessibilitySmoke(page, 'usage');
  await screenshot(page, 'usage-desktop');
  log(`    row shows ${ENGINE}, succeeded, ${cost}; output ${type}`);
}

// A public receiver (an address literal: this machine resolves no public name); nothing answers
// there, so the deliveries stay pending, which is what the log then shows.
const RECEIVER = 'https://93.184.216.34/hooks/media';

async function step6a_webhooksPage() {
  const { page } = state.desktop;
  await page.goto(url('/console/webhooks'));
  await expectPath(page, '/console/webhooks', 'GET /console/webhooks');
  const card = page.locator(`div.webhook-key[data-key-id="${state.keyId}"]`);
  await expectVisible(card, "the key's webhook card");
  assert.ok(!(await page.content()).includes('whsec_'), 'no signing secret on the page');
  await card.locator('input[name=url]').fill(RECEIVER);
  await card.locator('input[name=running]').check();
  await Promise.all([page.waitForEvent('framenavigated', { timeout: ACTION_TIMEOUT }), card.locator('form.webhook-form [type=submit]').click()]);
  await page.waitForLoadState('load');
  await expectPath(page, '/console/webhooks', 'after saving the default webhook');
  const saved = page.locator(`div.webhook-key[data-key-id="${state.keyId}"] input[name=url]`);
  assert.equal(await saved.inputValue(), RECEIVER, 'the default webhook is shown');
  await accessibilitySmoke(page, 'webhooks');
  await screenshot(page, 'webhooks-desktop');
  // A new signing secret is shown once; the page's own address never shows it again.
  const rotate = page.locator(`div.webhook-key[data-key-id="${state.keyId}"] form.secret-form [type=submit]`);
  await Promise.all([page.waitForEvent('framenavigated', { timeout: ACTION_TIMEOUT }), rotate.click()]);
  await page.waitForLoadState('load');
  const secret = await text(page.locator('code#webhook-secret'), 'code#webhook-secret');
  assert.ok(secret.startsWith('whsec_'), `the new secret ${JSON.stringify(secret.slice(0, 8))}...`);
  await screenshot(page, 'webhooks-new-secret');
  await page.reload();
  assert.ok(!(await page.content()).includes(secret), 'a reload no longer shows the secret');
  log(`    default webhook ${RECEIVER} (running and completed) saved; a new signing secret shown once`);
}

async function step6b_cancelFromUsage() {
  const { page } = state.desktop;
  // A long video: still queued or running when the page shows it.
  const response = await fetchWithTimeout(url('/v1/generate'), {
    method: 'POST',
    headers: { Authorization: `Bearer ${state.secret}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ model: 'lambda-t2v', prompt: 'a slow walkthrough', params: { duration: 10, resolution: '720p' } }),
  });
  const queued = await readJson(response, 'POST /v1/generate (a long job)');
  assert.equal(response.status, 202, `POST /v1/generate answered ${response.status}: ${JSON.stringify(queued)}`);
  await page.goto(url('/console/usage'));
  const row = page.locator(`table#recent-tasks tr[data-task-id="${queued.id}"]`);
  const status = (await text(row.locator('td.status'), 'the long job td.status')).toLowerCase();
  assert.ok(['queued', 'running'].includes(status), `the long job is ${status}`);
  const cancel = row.locator('form.cancel-job button');
  await expectVisible(cancel, 'the Cancel button of an unfinished job');
  await screenshot(page, 'usage-cancel');
  // The form posts, the console answers 303, and the browser loads the usage page again.
  await Promise.all([page.waitForEvent('framenavigated', { timeout: ACTION_TIMEOUT }), cancel.click()]);
  await page.waitForLoadState('load');
  await expectPath(page, '/console/usage', 'the usage page after cancelling');
  const after = page.locator(`table#recent-tasks tr[data-task-id="${queued.id}"]`);
  assert.equal((await text(after.locator('td.status'), 'the cancelled job td.status')).toLowerCase(), 'failed');
  const reason = await text(after.locator('td.outputs'), 'the cancelled job td.outputs');
  assert.ok(reason.includes('cancelled by client'), `the row says why: ${JSON.stringify(reason)}`);
  assert.equal(await after.locator('form.cancel-job').count(), 0, 'no Cancel on an ended job');
  const done = state.desktop.page.locator(`table#recent-tasks tr[data-task-id="${state.taskId}"] form.cancel-job`);
  assert.equal(await done.count(), 0, 'no Cancel on a succeeded job');
  log(`    ${queued.id} was ${status}; cancelled from the usage page, it reads failed: cancelled by client`);
}

async function step6c_deliveryLog() {
  const { page } = state.desktop;
  await page.goto(url('/console/webhooks'));
  // The cancelled job's message went to the key's default target, logged in the same transaction.
  const rows = page.locator('table#deliveries tr[data-delivery-id]');
  assert.ok((await rows.count()) >= 1, 'the delivery log lists the cancelled job');
  const first = await text(rows.first().locator('td.receiver'), 'the delivery td.receiver');
  assert.equal(first, RECEIVER, 'the delivery went to the default target');
  await screenshot(page, 'webhooks-deliveries');
  log(`    ${await rows.count()} delivery row(s) to ${first}`);
}

async function step7_mcpThroughConnectorUrl() {
  const connectorUrl = state.clipboardConnectorUrl;
  assert.equal(connectorUrl, state.connectorUrl, 'the copied connector URL');
  state.mcpSession = null;

  const init = await mcpPost(connectorUrl, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: MCP_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'console-e2e', version: '1.0.0' },
    },
  });
  assert.equal(init.response.status, 200, `initialize answered ${init.response.status}: ${JSON.stringify(init.message)}`);
  assert.ok(init.message?.result, `initialize: no result in ${JSON.stringify(init.message)}`);
  const version = init.message.result.protocolVersion;
  assert.ok(MCP_SUPPORTED_VERSIONS.includes(version), `initialize negotiated ${JSON.stringify(version)}`);
  // The connector issues no session id today; carry one if it ever does.
  state.mcpSession = init.response.headers.get('mcp-session-id');

  const initialized = await mcpPost(connectorUrl, { jsonrpc: '2.0', method: 'notifications/initialized' }, version);
  assert.equal(initialized.response.status, 202, `notifications/initialized answered ${initialized.response.status}`);

  const list = await mcpPost(connectorUrl, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, version);
  assert.equal(list.response.status, 200, `tools/list answered ${list.response.status}: ${JSON.stringify(list.message)}`);
  const tools = list.message?.result?.tools;
  assert.ok(Array.isArray(tools) && tools.length > 0, `tools/list: expected a non-empty tools array, got ${JSON.stringify(list.message)}`);
  log(`    protocol ${version}; tools: ${tools.map((t) => t.name).join(', ')}`);
}

async function step8_accountPage() {
  const { page } = state.desktop;
  await page.goto(url('/console/account'));
  await expectPath(page, '/console/account', 'GET /console/account');
  for (const selector of ['#free-allowance-left', '#card-on-file', '#invoice-balance']) {
    await expectVisible(page.locator(selector), selector);
  }
  await accessibilitySmoke(page, 'account');
  await screenshot(page, 'account-desktop');
}

async function step9_revokeKey() {
  const { page } = state.desktop;
  await page.goto(url('/console/keys'));
  await expectPath(page, '/console/keys', 'GET /console/keys');
  await keyRow(page, state.keyId).locator('.revoke').first().click();
  await expectPath(page, `/console/keys/${encodeURIComponent(state.keyId)}/revoke`, 'the revoke link');
  await expectVisible(page.locator('button#confirm'), 'button#confirm');
  await accessibilitySmoke(page, 'revoke-confirm');
  await screenshot(page, 'revoke-confirm-desktop');

  await page.locator('button#confirm').click();
  await expectPath(page, '/console/keys', 'after confirming the revocation');
  const status = await text(keyRow(page, state.keyId).locator('td.status'), 'the revoked key td.status');
  assert.equal(status.toLowerCase(), 'revoked', 'the key status after revoking');

  const usage = await fetchWithTimeout(url('/v1/usage'), { headers: { Authorization: `Bearer ${state.secret}` } });
  const body = await readJson(usage, 'GET /v1/usage with the revoked key');
  assert.equal(usage.status, 401, `GET /v1/usage with the revoked key answered ${usage.status}: ${JSON.stringify(body)}`);
  assert.equal(typeof body.error, 'string', `the 401 body should have an error string: ${JSON.stringify(body)}`);

  const mcp = await mcpPost(state.connectorUrl, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: MCP_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'console-e2e', version: '1.0.0' } },
  });
  assert.equal(mcp.response.status, 401, `the connector URL of the revoked key answered ${mcp.response.status}`);
  log('    revoked: the console shows it, /v1/usage and the connector answer 401');
}

async function step10_phoneScreenshots() {
  state.phone = await newContext('phone');
  const { page } = state.phone;

  await page.goto(url('/console/sign-up'));
  await expectPath(page, '/console/sign-up', 'GET /console/sign-up (phone)');
  await screenshot(page, 'sign-up-phone');

  await page.goto(url('/console/sign-in'));
  await expectPath(page, '/console/sign-in', 'GET /console/sign-in (phone)');
  await screenshot(page, 'sign-in-phone');
  await page.locator('input[name=email]').fill(EMAIL);
  await page.locator('input[name=password]').fill(PASSWORD);
  await page.locator('form:has(input[name=password])').first().locator('button[type=submit]').click();
  await waitFor('signing in on the phone leaves the sign-in page', () => new URL(page.url()).pathname !== '/console/sign-in');

  await page.goto(url('/console/keys'));
  await expectPath(page, '/console/keys', 'GET /console/keys (phone, signed in)');
  await screenshot(page, 'keys-phone');

  // A second key, for the new-secret and revoke-confirm views on a phone (revoked again at once).
  const form = page.locator('form#create-key');
  await form.locator('input[name=label]').fill(PHONE_KEY_LABEL);
  await form.locator('input[name=spend_cap]').fill('1');
  await form.locator('[type=submit]').first().click();
  await expectVisible(page.locator('#new-key'), '#new-key (phone)');
  state.phoneSecret = await text(page.locator('code#secret'), 'code#secret (phone)');
  assert.match(state.phoneSecret, /^mgk_[0-9a-f]{64}$/, 'the phone key secret');
  await screenshot(page, 'keys-with-new-secret-phone');

  await page.reload({ timeout: ACTION_TIMEOUT });
  await expectPath(page, '/console/keys', 'after reloading (phone)');
  const row = page.locator('table#keys tr[data-key-id]').filter({ hasText: state.phoneSecret.slice(0, 12) });
  assert.equal(await row.count(), 1, 'the phone key row');
  const phoneKeyId = await row.getAttribute('data-key-id');
  await page.goto(url(`/console/keys/${encodeURIComponent(phoneKeyId)}/revoke`));
  await expectVisible(page.locator('button#confirm'), 'button#confirm (phone)');
  await screenshot(page, 'revoke-confirm-phone');
  await page.locator('button#confirm').click();
  await expectPath(page, '/console/keys', 'after revoking (phone)');
  assert.equal(
    (await text(keyRow(page, phoneKeyId).locator('td.status'), 'the phone key td.status')).toLowerCase(),
    'revoked',
    'the phone key status after revoking',
  );

  await page.goto(url('/console/usage'));
  await expectPath(page, '/console/usage', 'GET /console/usage (phone)');
  await expectVisible(page.locator('svg#spend-chart'), 'svg#spend-chart (phone)');
  await screenshot(page, 'usage-phone');

  await page.goto(url('/console/account'));
  await expectPath(page, '/console/account', 'GET /console/account (phone)');
  await screenshot(page, 'account-phone');

  await state.phone.context.close();
  state.phone = null;
  state.current = state.desktop.page;
}

async function step11_accessibilitySummary() {
  // accessibilitySmoke runs on each desktop page as it loads (before any interaction, so keyboard
  // focus starts at the top); this step checks every page was covered, and that no page threw an
  // uncaught script error along the way.
  const expected = ['sign-in', 'sign-up', 'keys', 'keys-with-new-secret', 'revoke-confirm', 'usage', 'account'];
  const missing = expected.filter((name) => !state.accessibilityChecked.has(name));
  assert.deepEqual(missing, [], 'pages the accessibility smoke check did not cover');
  assert.deepEqual(state.pageErrors, [], 'uncaught script errors in the console pages');
  log(`    accessibility checked on: ${[...state.accessibilityChecked].join(', ')}`);
}

async function step13_signOut() {
  const { context, page } = state.desktop;
  await page.goto(url('/console/keys'));
  await expectPath(page, '/console/keys', 'GET /console/keys before signing out');
  const cookies = await context.cookies(BASE_URL);

  await page.locator('#sign-out').click();
  await expectPath(page, '/console/sign-in', 'after #sign-out');
  await page.goto(url('/console/keys'));
  await expectPath(page, '/console/sign-in', 'GET /console/keys after signing out');

  // The old session cookie must be dead on the server, not just dropped by the browser.
  const replay = await state.browser.newContext({ baseURL: BASE_URL });
  try {
    await replay.addCookies(cookies);
    const replayPage = await replay.newPage();
    await replayPage.goto(url('/console/keys'), { timeout: ACTION_TIMEOUT });
    await expectPath(replayPage, '/console/sign-in', 'GET /console/keys with the signed-out session cookie');
  } finally {
    await replay.close();
  }
  log('    signed out; the old session cookie no longer opens /console/keys');
}

async function step12_serverLogHasNoSecret() {
  if (!SERVER_LOG) {
    log('    SERVER_LOG not set: skipped');
    return;
  }
  // Give the server a moment to flush its last access-log lines.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const logText = readFileSync(SERVER_LOG, 'utf8');
  const secrets = [
    ['the API key secret', state.secret],
    ['the phone key secret', state.phoneSecret],
    ['the account password', PASSWORD],
  ];
  for (const [what, value] of secrets) {
    if (!value) continue;
    assert.ok(!logText.includes(value), `${SERVER_LOG} contains ${what}`);
  }
  // The secret's hex body alone must not be there either (e.g. logged without its prefix).
  assert.ok(!logText.includes(state.secret.slice(4)), `${SERVER_LOG} contains the key's hex body`);
  assert.ok(!logText.includes(state.verifyToken), `${SERVER_LOG} contains the mailed confirmation token`);
  log(`    ${SERVER_LOG}: ${logText.length} bytes, no secret`);
}

// ---------------------------------------------------------------------------------------------
// Runner

const STEPS = [
  step1_signedOutRedirect,
  step2_signUp,
  step3_createKey,
  step4_reloadHidesSecret,
  step5_generateWithApi,
  step5b_lowerRates,
  step6_usagePage,
  step6a_webhooksPage,
  step6b_cancelFromUsage,
  step6c_deliveryLog,
  step7_mcpThroughConnectorUrl,
  step8_accountPage,
  step9_revokeKey,
  step10_phoneScreenshots,
  step11_accessibilitySummary,
  step13_signOut,
  step12_serverLogHasNoSecret, // last, so the log covers every request of the run
];

async function main() {
  if (!BASE_URL) {
    console.error('FAIL [setup]: BASE_URL is not set (e.g. BASE_URL=http://127.0.0.1:8080)');
    return 1;
  }
  const watchdog = setTimeout(() => {
    console.error(`FAIL [watchdog]: the run took longer than ${WATCHDOG / 1000} s`);
    process.exit(1);
  }, WATCHDOG);

  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  log(`console e2e against ${BASE_URL}; screenshots in ${SCREENSHOT_DIR}`);
  const started = Date.now();
  let current = 'launch';
  try {
    state.browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], timeout: 30_000 });
    state.desktop = await newContext('desktop');
    for (const step of STEPS) {
      current = step.name;
      const t0 = Date.now();
      log(`==> ${current}`);
      await step();
      log(`    ok (${Date.now() - t0} ms)`);
    }
    log(`PASS: ${STEPS.length} steps in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return 0;
  } catch (error) {
    console.error(`FAIL [${current}]: ${error?.message || error}`);
    if (error?.stack && !(error instanceof assert.AssertionError)) console.error(error.stack);
    if (state.current) {
      console.error(`    page at failure: ${state.current.url()}`);
      try {
        await state.current.screenshot({ path: path.join(SCREENSHOT_DIR, 'failure.png'), fullPage: true, timeout: 5_000 });
        console.error(`    screenshot ${path.join(SCREENSHOT_DIR, 'failure.png')}`);
      } catch (screenshotError) {
        console.error(`    (no failure screenshot: ${screenshotError.message})`);
      }
    }
    return 1;
  } finally {
    clearTimeout(watchdog);
    if (state.browser) await state.browser.close().catch(() => {});
  }
}

process.exit(await main());
