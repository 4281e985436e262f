/*
 * Browser snippet: captures the referral click and keeps its id in the
 * first-party cookie `svc_click_id`; `svc.signup(userId)` records the lead.
 *
 *   <script>window.svc = window.svc || function () { (svc.q = svc.q || []).push(arguments); };</script>
 *   <script src="https://track.example.com/sdk/svc.js" data-program-id="1" defer></script>
 *   ... after your signup succeeds:  svc("signup", user.id)
 *
 * The one-line stub queues calls made before this script has run (it is
 * deferred); this script then runs them. Once loaded, svc.signup(id) works too.
 *
 * Options (data-*): program-id (required), api (default: the script's origin),
 * param (the referral query parameter, default "ref"), cookie-days (default 90),
 * test ("true": every click and lead is a test event, for the dashboard checklist;
 * no commission can follow from it).
 * Pass the same user id to your server's trackSale as customerExternalId.
 * The browser only binds its click to a new user id: an email, or a user id
 * that already has a lead, is recorded by your server with the API key.
 */
(function () {
  "use strict";
  var script = document.currentScript;
  var data = (script && script.dataset) || {};
  var api = (data.api || (script ? new URL(script.src).origin : location.origin)).replace(/\/$/, "");
  var programId = Number(data.programId);
  var param = data.param || "ref";
  var days = Number(data.cookieDays || 90);
  // data-test="true" (or data-test with no value) marks everything this page sends as a test.
  var test = data.test === "" || data.test === "true";
  var COOKIE = "svc_click_id";

  function readCookie(name) {
    var match = document.cookie.match(new RegExp("(?:^|; )" + name + "=([^;]*)"));
    return match ? decodeURIComponent(match[1]) : null;
  }

  function writeCookie(name, value) {
    document.cookie = name + "=" + encodeURIComponent(value) + "; Max-Age=" + days * 86400 + "; Path=/; SameSite=Lax" + (location.protocol === "https:" ? "; Secure" : "");
  }

  function post(path, body) {
    return fetch(api + path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body), keepalive: true, credentials: "omit" }).then(function (res) {
      return res.json().then(function (json) {
        if (!res.ok) throw new Error((json && json.error && json.error.message) || "HTTP " + res.status);
        return json;
      });
    });
  }

  // A new referral link replaces an older click (last click wins in the browser; the server keeps first touch per customer).
  function captureClick() {
    var code = new URLSearchParams(location.search).get(param);
    if (!code || !programId) return Promise.resolve(readCookie(COOKIE));
    return post("/api/v1/track/click", { program_id: programId, referral_code: code, url: location.href, referrer: document.referrer || undefined, test: test })
      .then(function (res) {
        writeCookie(COOKIE, res.click_id);
        return res.click_id;
      })
      .catch(function () {
        return readCookie(COOKIE);
      });
  }

  var ready = captureClick();
  var methods = {
    clickId: function () {
      return readCookie(COOKIE);
    },
    /**
     * The discount the referring partner's group gives this visitor (a double-sided reward), for your checkout:
     * a promise of `{ platform, id, code, description }`, or null (no referral click, or no discount).
     */
    discount: function () {
      return ready.then(function (clickId) {
        if (!clickId) return null;
        return post("/api/v1/track/discount", { program_id: programId, click_id: clickId }).then(function (res) {
          return res.discount;
        });
      });
    },
    /** Records the signup of `userId` (the id your server will send as customerExternalId). */
    signup: function (userId) {
      return ready.then(function (clickId) {
        if (!clickId) return { attributed: false, reason: "no referral click" };
        return post("/api/v1/track/lead", { program_id: programId, customer_key: String(userId), click_id: clickId, test: test });
      });
    },
  };

  // `svc("signup", id)` and `svc.signup(id)` both work. Calls made before this
  // script ran (a `defer` or `async` tag) wait in the page's stub queue `svc.q`:
  // they run now, in order.
  var queued = (typeof window.svc === "function" && window.svc.q) || [];
  var svc = function (method) {
    if (!Object.prototype.hasOwnProperty.call(methods, method)) throw new Error("svc: unknown method '" + method + "'");
    return methods[method].apply(null, Array.prototype.slice.call(arguments, 1));
  };
  svc.ready = ready;
  svc.test = test;
  for (var name in methods) svc[name] = methods[name];
  window.svc = svc;
  for (var i = 0; i < queued.length; i++) {
    try {
      svc.apply(null, queued[i]);
    } catch (err) {
      if (window.console) console.error(err);
    }
  }
})();
