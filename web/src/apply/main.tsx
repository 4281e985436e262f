/**
 * The public application page (/portal/apply?program=ID; docs/merchants.md, "Applications"): anyone may ask to join a
 * program without signing in. It shows the program's name, its description and the merchant's questions from
 * GET /api/public/programs/:programId/application and sends the form to POST .../applications. The merchant's texts
 * are shown as text (line breaks kept by CSS), never as HTML. `company` is a honeypot: hidden from people (CSS,
 * aria-hidden, out of the Tab order) but filled by form-filling bots, whose applications the API drops.
 */
import { render, type ComponentChildren } from "preact";
import { useEffect, useId, useRef, useState } from "preact/hooks";
import { api, errorMessage } from "../lib/api";
import { setLanguage, t, tWith } from "../lib/i18n";
import { Field } from "../lib/ui";

// The applicant has no profile yet: the browser's language, else English (docs/partners.md, "Languages").
setLanguage(null);

/** What the API accepts (services/programs): each field's maxLength. */
const LIMITS = { name: 100, email: 254, website: 500, promotion: 2000, answer: 2000 } as const;

interface ApplicationForm {
  programId: number;
  programName: string;
  description: string;
  questions: string[];
  terms: string;
  open: boolean;
}

interface Submitted {
  applicationId: number;
  status: "received" | "approved";
}

/** The website as an address: "example.com/blog" gets https:// (the API takes http and https URLs only). */
const websiteOf = (text: string): string | undefined => (text === "" ? undefined : /^[a-z][a-z0-9+.-]*:/i.test(text) ? text : `https://${text}`);

const programIdOf = (search: string): number | null => {
  const id = Number(new URLSearchParams(search).get("program"));
  return Number.isSafeInteger(id) && id > 0 ? id : null;
};

function App() {
  const [programId] = useState(() => programIdOf(location.search));
  const [form, setForm] = useState<ApplicationForm | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);

  useEffect(() => {
    if (programId === null) return;
    api<ApplicationForm>("GET", `/api/public/programs/${programId}/application`).then(setForm, (e) => setLoadError(errorMessage(e)));
  }, [programId]);
  useEffect(() => {
    document.title = form ? t("apply.titleOf", { program: form.programName }) : t("apply.title");
  }, [form]);

  if (programId === null) {
    return (
      <Page title={t("apply.title")}>
        <section>
          <p>{t("apply.noProgram")}</p>
        </section>
      </Page>
    );
  }
  if (loadError) {
    return (
      <Page title={t("apply.title")}>
        <p class="bad" role="alert">
          {loadError}
        </p>
      </Page>
    );
  }
  if (!form) return <p class="muted apply-loading">{t("portal.loading")}</p>;
  return (
    <Page title={form.programName}>
      {form.description && <p class="apply-description pre-line">{form.description}</p>}
      {form.open ? (
        <ApplyForm form={form} />
      ) : (
        <section aria-labelledby="closed-title">
          <h2 id="closed-title">{t("apply.closed.title")}</h2>
          <p>{t("apply.closed.body", { program: form.programName })}</p>
        </section>
      )}
    </Page>
  );
}

/** The page's frame: the program's name as its heading, on the accent band. */
function Page({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <>
      <header class="apply-head">
        <div class="apply-inner">
          <p class="apply-kicker">{t("apply.kicker")}</p>
          <h1>{title}</h1>
        </div>
      </header>
      <main class="apply">{children}</main>
    </>
  );
}

function ApplyForm({ form }: { form: ApplicationForm }) {
  // Each error is a new round, so the same message twice still moves the focus.
  const [error, setError] = useState<{ text: string; round: number; focus: HTMLElement | null } | null>(null);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<{ status: Submitted["status"]; email: string } | null>(null);
  const alertRef = useRef<HTMLParagraphElement>(null);
  const doneRef = useRef<HTMLHeadingElement>(null);
  const terms = form.terms.trim() !== "";
  const fail = (text: string, focus: HTMLElement | null = null) => setError((e) => ({ text, round: (e?.round ?? 0) + 1, focus }));

  useEffect(() => {
    if (done) doneRef.current?.focus();
  }, [done]);
  // The API's refusal: the focus goes to the message. A field the browser found wrong: to that field (the alert is
  // read out as it appears).
  useEffect(() => {
    if (error) (error.focus ?? alertRef.current)?.focus();
  }, [error]);

  const submit = async (event: Event) => {
    event.preventDefault();
    const element = event.currentTarget as HTMLFormElement;
    // The browser's own checks (required, maxLength, email), told in our alert; the focus goes to the field to fix.
    const invalid = [...element.elements].find((el): el is HTMLInputElement => "validity" in el && !(el as HTMLInputElement).validity.valid);
    if (invalid) {
      const label = invalid.labels?.[0]?.textContent?.trim() ?? invalid.name;
      invalid.setAttribute("aria-invalid", "true");
      fail(`${label}: ${invalid.validationMessage}`, invalid);
      return;
    }
    const data = new FormData(element);
    const text = (name: string) => String(data.get(name) ?? "").trim();
    const body = {
      name: text("name"),
      email: text("email"),
      website: websiteOf(text("website")),
      promotion: text("promotion"),
      answers: form.questions.map((_, i) => text(`answer-${i}`)),
      acceptTerms: terms && data.get("acceptTerms") === "on",
      // The honeypot, sent as found: people leave it empty.
      company: String(data.get("company") ?? ""),
    };
    setBusy(true);
    setError(null);
    try {
      const submitted = await api<Submitted>("POST", `/api/public/programs/${form.programId}/applications`, body);
      setDone({ status: submitted.status, email: body.email });
    } catch (e) {
      fail(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  if (done) {
    return (
      <section class="apply-done" aria-labelledby="done-title">
        <h2 id="done-title" ref={doneRef} tabIndex={-1} class="focus-target">
          {done.status === "approved" ? t("apply.approved.title") : t("apply.received.title")}
        </h2>
        {done.status === "approved" ? (
          <p>{tWith("apply.approved.body", { email: <strong class="address">{done.email}</strong>, portal: <a href="/portal">{t("apply.portalLink")}</a> })}</p>
        ) : (
          <p>{tWith("apply.received.body", { email: <strong class="address">{done.email}</strong> }, { program: form.programName })}</p>
        )}
      </section>
    );
  }

  return (
    <form class="card apply-form" aria-labelledby="apply-title" onSubmit={submit} noValidate onInput={(e) => (e.target as HTMLElement).removeAttribute("aria-invalid")}>
      <h2 id="apply-title">{t("apply.form.title")}</h2>
      <p class="muted">{t("apply.form.intro")}</p>
      <Field label={t("apply.name")} name="name" autocomplete="name" required maxLength={LIMITS.name} />
      <Field label={t("apply.email")} name="email" type="email" autocomplete="email" required maxLength={LIMITS.email} hint={t("apply.email.hint")} />
      <Field label={t("apply.website")} name="website" inputMode="url" autocomplete="url" maxLength={LIMITS.website} hint={t("apply.website.hint")} />
      <TextArea label={t("apply.promotion")} name="promotion" required maxLength={LIMITS.promotion} />
      {form.questions.map((question, i) => (
        <TextArea key={i} label={question} name={`answer-${i}`} required maxLength={LIMITS.answer} />
      ))}
      {terms && (
        <div class="field">
          <p class="label-like" id="terms-title">
            {t("apply.terms")}
          </p>
          <div class="apply-terms pre-line" role="region" aria-labelledby="terms-title" tabIndex={0}>
            {form.terms}
          </div>
          <div class="choice">
            <input type="checkbox" id="accept-terms" name="acceptTerms" required />
            <label for="accept-terms">{t("apply.acceptTerms")}</label>
          </div>
        </div>
      )}
      <div class="hp" aria-hidden="true">
        <label for="company">{t("apply.honeypot")}</label>
        <input id="company" name="company" type="text" tabIndex={-1} autocomplete="off" />
      </div>
      {error && (
        <p class="bad focus-target" role="alert" tabIndex={-1} ref={alertRef}>
          {error.text}
        </p>
      )}
      <p>
        <button type="submit" disabled={busy}>
          {t("apply.submit")}
        </button>
      </p>
    </form>
  );
}

/** A labelled textarea (multi-line answers). */
function TextArea({ label, name, required, maxLength }: { label: string; name: string; required?: boolean; maxLength: number }) {
  const id = useId();
  return (
    <div class="field">
      <label for={id} class="pre-line">
        {label}
      </label>
      <textarea id={id} name={name} rows={4} required={required} maxLength={maxLength} />
    </div>
  );
}

render(<App />, document.getElementById("app") as HTMLElement);
