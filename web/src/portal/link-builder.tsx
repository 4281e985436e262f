/**
 * The link builder: the partner picks one of the merchant's sites and types a page's path; the page shows the link
 * (site + path + ?ref=<code>, the path's own query kept) with a copy button and a QR code of it (an <img> from a data:
 * URL, with a download link). Without a site (the program names none), the code to add to links instead.
 */
import QRCode from "qrcode";
import { useEffect, useRef, useState } from "preact/hooks";
import { Field, SelectField } from "../lib/ui";
import { t, tWith } from "../lib/i18n";
import type { PortalProgram } from "./types";

/** The origin of an absolute http(s) URL, or null. */
function originOf(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.origin : null;
  } catch {
    return null;
  }
}

/** The sites a link may lead to: the default landing URL's origin first, then the allowed origins, each once. */
export function sitesOf(program: PortalProgram): string[] {
  const named = [originOf(program.defaultLandingUrl), ...(program.allowedOrigins ?? []).map(originOf)];
  // An API without the list yet still gives the link: its origin is the site.
  if (!program.allowedOrigins) named.push(originOf(program.referralLink));
  return [...new Set(named.filter((o): o is string => o !== null))];
}

/** Where a new link starts: the default landing page's path (and query) on its site, else the home page. */
function startingPath(program: PortalProgram): string {
  if (!program.defaultLandingUrl || !originOf(program.defaultLandingUrl)) return "/";
  const url = new URL(program.defaultLandingUrl);
  return `${url.pathname}${url.search}${url.hash}`;
}

export type Built = { ok: true; link: string } | { ok: false; message: string };

/**
 * The referral link to `path` on `site`: the path may carry its own query and fragment (kept), or be the full address
 * of a page on that site; `param`=`code` is set on it (replacing one already there). A full address on another site is
 * refused, and so is anything that does not resolve to `site` (//host, \\host, javascript:…).
 */
export function buildLink(site: string, path: string, param: string, code: string, sites: readonly string[] = [site]): Built {
  const typed = path.trim();
  const looksAbsolute = /^[a-z][a-z0-9+.-]*:/i.test(typed) || /^[\\/]{2}/.test(typed);
  let url: URL;
  try {
    url = new URL(looksAbsolute || typed.startsWith("/") || typed.startsWith("?") || typed.startsWith("#") ? typed || "/" : `/${typed}`, site);
  } catch {
    return { ok: false, message: t("link.err.notPath") };
  }
  if (url.origin !== site) {
    const web = url.protocol === "http:" || url.protocol === "https:";
    if (web && sites.includes(url.origin)) return { ok: false, message: t("link.err.chooseSite", { host: url.host }) };
    const here = new URL(site).host;
    // The same host by another scheme (http: for an https: site) is named in full, not as "another site (shop.example)".
    const there = url.host === here ? url.origin : url.host;
    return {
      ok: false,
      message: web ? t("link.err.otherSite", { there, site }) : t("link.err.notPage", { here }),
    };
  }
  url.searchParams.set(param, code);
  return { ok: true, link: url.toString() };
}

export function LinkBuilder({ program }: { program: PortalProgram }) {
  const code = program.referralCode ?? "";
  const param = program.referralParam ?? "ref";
  const sites = sitesOf(program);
  const [site, setSite] = useState(sites[0] ?? "");
  const [path, setPath] = useState(() => startingPath(program));
  const [copied, setCopied] = useState("");
  const [qr, setQr] = useState<{ link: string; url: string } | null>(null);
  const box = useRef<HTMLElement>(null);

  // Another program, or the merchant changed its sites: start again from its default page.
  const sitesKey = sites.join(" ");
  useEffect(() => {
    setSite(sites[0] ?? "");
    setPath(startingPath(program));
  }, [program.programId, sitesKey, program.defaultLandingUrl]);

  const chosen = sites.includes(site) ? site : (sites[0] ?? "");
  const built = chosen ? buildLink(chosen, path, param, code, sites) : null;
  const link = built?.ok ? built.link : null;

  useEffect(() => setCopied(""), [link]);
  useEffect(() => {
    if (!link) return;
    let current = true;
    QRCode.toDataURL(link, { errorCorrectionLevel: "M", margin: 2, width: 192 }).then(
      (url) => current && setQr({ link, url }),
      () => current && setQr(null),
    );
    return () => {
      current = false;
    };
  }, [link]);

  if (!chosen)
    return (
      <section id="referral" aria-labelledby="referral-title">
        <h2 id="referral-title">{t("link.code.title")}</h2>
        <p>
          {tWith("link.code.body", {
            code: <strong>{code}</strong>,
            param: (
              <code>
                ?{param}={code}
              </code>
            ),
          })}
        </p>
        <p class="muted">{t("link.code.noSite")}</p>
      </section>
    );

  const selectForCopy = () => {
    const element = box.current;
    const selection = window.getSelection();
    if (element && selection) {
      const range = document.createRange();
      range.selectNodeContents(element);
      selection.removeAllRanges();
      selection.addRange(range);
    }
    setCopied(t("link.selected"));
  };
  const copy = () => {
    if (!link) return;
    if (!navigator.clipboard?.writeText) return selectForCopy();
    navigator.clipboard.writeText(link).then(() => setCopied(t("link.copied")), selectForCopy);
  };
  const qrFile = `qr-${code.replace(/[^A-Za-z0-9_-]/g, "") || "link"}.png`;

  return (
    <section id="referral" aria-labelledby="referral-title">
      <h2 id="referral-title">{t("link.title")}</h2>
      <p class="muted">{tWith("link.intro", { code: <strong>{code}</strong> })}</p>
      <div class="fields link-fields">
        <SelectField
          label={t("link.site")}
          id="link-site"
          value={chosen}
          onChange={(e) => setSite((e.currentTarget as HTMLSelectElement).value)}
          options={sites.map((s) => [s, new URL(s).host])}
        />
        <Field
          label={t("link.page")}
          id="link-path"
          hint={t("link.page.hint")}
          type="text"
          spellcheck={false}
          autocomplete="off"
          value={path}
          aria-invalid={built && !built.ok ? "true" : undefined}
          aria-errormessage={built && !built.ok ? "link-path-error" : undefined}
          onInput={(e) => setPath((e.currentTarget as HTMLInputElement).value)}
        />
      </div>
      {/* Read out politely as the partner types (an alert would interrupt at every key of an address being typed). */}
      <div aria-live="polite">
        {built && !built.ok && (
          <p class="bad" id="link-path-error">
            {built.message}
          </p>
        )}
      </div>
      {link && (
        <div class="link-result">
          <p class="label-like" id="referral-link-label">
            {t("link.yours")}
          </p>
          <div class="copy-row">
            <code class="secret" id="referral-link" ref={box}>
              {link}
            </code>
            <button type="button" id="copy-link" onClick={copy}>
              {t("link.copy")}
            </button>
            <span class="muted" role="status" aria-live="polite">
              {copied}
            </span>
          </div>
          {qr?.link === link && (
            <div class="qr">
              <img src={qr.url} alt={t("link.qr")} width={192} height={192} />
              <p>
                <a class="button secondary" href={qr.url} download={qrFile}>
                  {t("link.download")}
                </a>
              </p>
            </div>
          )}
        </div>
      )}
    </section>
  );
}
