package provider

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// zaiCode is what one of Z.ai's (Zhipu's) business error codes says: the
// kind, and whether retrying can help.
type zaiCode struct {
	kind    Kind
	noRetry bool
}

// zaiCodes are the business codes of Z.ai's error-code table
// (docs.z.ai/api-reference/api-code, docs.bigmodel.cn/cn/api/api-code)
// that say more than their HTTP status (a 429 for most). Its
// Anthropic-compatible endpoint (api.z.ai/api/anthropic,
// open.bigmodel.cn/api/anthropic) writes them where Anthropic writes the
// error type: {"type":"error","error":{"type":"1113","message":
// "Insufficient balance or no resource package. Please recharge."},
// "request_id":"…"}, a 429 (anthropics/claude-code#9201), or 1308 "Usage
// limit reached for 5 hour. Your limit will reset at …", in a 429 or a
// stream's error event. Its OpenAI-compatible endpoint
// (api.z.ai/api/paas/v4, open.bigmodel.cn/api/paas/v4) writes them as the
// error's code, with no type: {"error":{"code":"1113","message":…}}
// (musistudio/claude-code-router#1071, zai-org/GLM-5#148).
var zaiCodes = map[string]zaiCode{
	// Authentication failed, token missing, invalid, expired.
	"1000": {KindUnauthenticated, true}, "1001": {KindUnauthenticated, true},
	"1002": {KindUnauthenticated, true}, "1003": {KindUnauthenticated, true},
	"1004": {KindUnauthenticated, true},
	// The account is inactive, does not exist, is locked (for a
	// violation): no retry or wait changes that; another deployment's
	// account may serve the call.
	"1110": {KindPermissionDenied, true}, "1111": {KindPermissionDenied, true},
	"1112": {KindPermissionDenied, true}, "1121": {KindPermissionDenied, true},
	// The balance is spent: a quota, as Anthropic's credit balance.
	"1113": {KindRateLimited, true},
	// The model does not exist; no access to the API; the plan does not
	// include the model.
	"1211": {KindNotFound, true}, "1220": {KindPermissionDenied, true},
	"1311": {KindPermissionDenied, true},
	// The request's parameters: wrong (1210), a method the model does not
	// serve (1212), a field missing (1213), invalid (1214), two fields
	// that exclude each other (1215) (docs.bigmodel.cn/cn/api/api-code):
	// the same request fails every time. In a 200 stream, where no
	// status says so, they were unknown failures, retried.
	"1210": {KindInvalidRequest, true}, "1212": {KindInvalidRequest, true},
	"1213": {KindInvalidRequest, true}, "1214": {KindInvalidRequest, true},
	"1215": {KindInvalidRequest, true},
	// The API is withdrawn (1221) or does not exist (1222).
	"1221": {KindNotFound, true}, "1222": {KindNotFound, true},
	// The prompt is too long.
	"1261": {KindContextLength, true},
	// Unsafe or sensitive content in the input or the output.
	"1301": {KindContentFilter, true},
	// Concurrency, frequency, traffic limits: sending too fast, retried.
	"1302": {KindRateLimited, false}, "1303": {KindRateLimited, false},
	"1305": {KindRateLimited, false},
	// The day's call count, the 5-hour, weekly or monthly usage cap
	// (reset hours or days later, the message says when) and an expired
	// plan: spent quotas, not retried.
	"1304": {KindRateLimited, true}, "1308": {KindRateLimited, true},
	"1309": {KindRateLimited, true}, "1310": {KindRateLimited, true},
	// The account's request rate is restricted for breaching the fair-use
	// policy until its owner applies to lift it (1313): no wait helps.
	"1313": {KindRateLimited, true},
	// The model is overloaded ("try again later, or switch to …").
	"1312": {KindUnavailable, false},
}

// ZaiBusinessCode reads e.Code as a Z.ai business code when it is one of
// Z.ai's error-code table, and reports whether it was. The ones no retry
// can help are not retried (RetryDiscouraged, no delay), whatever the
// status. The caller decides whether the code can be Z.ai's: Anthropic's
// error types are words, never numbers; behind the OpenAI adapter other
// servers have numeric codes of their own (Mistral's "1000" is its
// internal error), but always beside a type, which Z.ai's have not.
func ZaiBusinessCode(e *Error) bool {
	c, ok := zaiCodes[e.Code]
	if !ok {
		return false
	}
	e.Kind = c.kind
	if c.noRetry {
		e.ShouldRetry = RetryDiscouraged
		e.RetryAfter = 0
	}
	return true
}

// zaiResetRE finds the reset Z.ai's usage caps name in their message:
// "Usage limit reached for 5 hour. Your limit will reset at 2026-09-09
// 05:38:28" (1308, a 429 of its OpenAI-compatible endpoint:
// hugalafutro/model-hotel#955), "Weekly/Monthly Limit Exhausted. Your
// limit will reset at …" (1310), inside its Anthropic-compatible
// endpoint's brackets ("[1308][Usage limit reached … reset at 2026-09-12
// 00:35:41][<request id>]"), in Chinese "您的限额将在 2026-08-25 07:41:44
// 重置" (dirge-code/dirge#818); some carry a zone ("reset at
// 2026-08-14T00:00:00Z", as LionSR/TeXRA#9865 quotes a 1310).
var zaiResetRE = regexp.MustCompile(`(?i)\breset at (\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2}(?:\.\d+)?)(Z|[+-]\d{2}:?\d{2})?|` +
	`将在\s*(\d{4}-\d{2}-\d{2})\s+(\d{2}:\d{2}:\d{2})\s*重置`)

// zaiZone is the zone of a reset Z.ai names without one: China Standard
// Time (UTC+8, no daylight saving), its own, whichever endpoint (api.z.ai
// or open.bigmodel.cn) answered. A 1308 from api.z.ai first seen at
// 14:45:20Z said "reset at 2026-09-12 00:35:41", which the account's usage
// endpoint gave as 2026-09-11T16:35:41Z and the 429's retry-after-ms as
// 997000 from 16:19:02Z (can1357/oh-my-pi#11014: read as UTC, the wait was
// 9h50m for a 5-hour window); read as UTC a cooldown of 8h55m stood for a
// real 55 minutes (diegosouzapw/OmniRoute#14479). Z.ai's request ids start
// with the same clock (20260912001903… for that 16:19:03Z answer).
var zaiZone = time.FixedZone("UTC+8", 8*60*60)

// ZaiUsageReset reads the reset one of Z.ai's spent usage caps names
// (1308's five hours, 1310's week or month: codes ZaiBusinessCode made a
// quota no retry helps): the wait until it, from the answer's Date (h),
// becomes the retry delay, as for MiniMax's Token Plan: longer than the
// gateway waits, so the call falls back and the caller learns when to come
// back, and a reset close enough is waited for. A reset without a zone is
// Z.ai's UTC+8 (zaiZone), not UTC. Without a reset, or with one already
// past, e is left as it is.
func ZaiUsageReset(e *Error, h http.Header) {
	if e == nil || e.Kind != KindRateLimited || e.ShouldRetry != RetryDiscouraged {
		return
	}
	if c, ok := zaiCodes[e.Code]; !ok || !c.noRetry {
		return
	}
	if d := zaiReset(e.Message, h); d > 0 {
		e.RetryAfter = d
		e.ShouldRetry = RetryUnsaid
	}
}

// zaiReset is the wait until the reset msg names (zaiResetRE), counted
// from the answer's Date (h); 0 when it names none, or one already past.
func zaiReset(msg string, h http.Header) time.Duration {
	m := zaiResetRE.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	day, clock, zone := m[1], m[2], m[3]
	if day == "" {
		day, clock = m[4], m[5]
	}
	loc := zaiZone
	if zone != "" {
		if zone == "Z" || zone == "z" {
			loc = time.UTC
		} else {
			z := strings.ReplaceAll(zone, ":", "")
			hh, err1 := strconv.Atoi(z[1:3])
			mm, err2 := strconv.Atoi(z[3:5])
			if err1 != nil || err2 != nil || hh > 14 || mm > 59 {
				return 0
			}
			off := hh*3600 + mm*60
			if z[0] == '-' {
				off = -off
			}
			loc = time.FixedZone(zone, off)
		}
	}
	reset, err := time.ParseInLocation("2006-01-02 15:04:05", day+" "+clock, loc)
	if err != nil {
		return 0
	}
	if d := reset.Sub(ResponseDate(h)); d > 0 {
		return d
	}
	return 0
}

// minimaxPlanRE finds MiniMax's code for a spent Token Plan, 2056, at the
// end of its message, and the reset the message may name before it:
// "usage limit exceeded, 5-hour usage limit reached for Token Plan Starter
// (1500/1500 used), resets at 2026-05-20T20:00:00Z (2056)", "Token Plan
// usage limit reached: Upgrade your Token Plan or purchase Credits for more
// usage. (2056)", "usage limit exceeded (2056)" (its Anthropic-compatible
// endpoint's 429 rate_limit_error, as clients quote it:
// MiniMax-AI/MiniMax-M2.7#36).
var minimaxPlanRE = regexp.MustCompile(`(?:resets at (\d{4}-\d{2}-\d{2}T[0-9:.]+(?:Z|[+-]\d{2}:\d{2}))\s*)?\(2056\)\s*$`)

// minimaxResetRE finds the reset a message names without the code after
// it, as MiniMax's base_resp status_msg may give it (its code is the
// status_code beside it).
var minimaxResetRE = regexp.MustCompile(`resets at (\d{4}-\d{2}-\d{2}T[0-9:.]+(?:Z|[+-]\d{2}:\d{2}))`)

// MiniMaxPlanLimit reads MiniMax's spent Token Plan (2056, at the end of
// a rate limit's message): a quota for hours, not a rate to slow down
// for. With the reset named, the wait until it (from the answer's Date, h)
// is the retry delay: longer than the gateway waits, so the call falls
// back and the caller learns when to come back, and a reset close enough
// is waited for. Without one the quota is spent: not retried.
func MiniMaxPlanLimit(e *Error, h http.Header) {
	if e.Kind != KindRateLimited {
		return
	}
	m := minimaxPlanRE.FindStringSubmatch(e.Message)
	if m == nil {
		return
	}
	if d := untilReset(m[1], h); d > 0 {
		e.RetryAfter = d
		return
	}
	e.ShouldRetry = RetryDiscouraged
	e.RetryAfter = 0
}

// MiniMaxPlanReset is the wait until the reset a message of MiniMax's
// spent Token Plan names ("… resets at 2026-05-20T20:00:00Z"), counted
// from the answer's Date (h); 0 when it names none, or one already past.
func MiniMaxPlanReset(msg string, h http.Header) time.Duration {
	m := minimaxResetRE.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	return untilReset(m[1], h)
}

func untilReset(stamp string, h http.Header) time.Duration {
	if stamp == "" {
		return 0
	}
	reset, err := time.Parse(time.RFC3339, stamp)
	if err != nil {
		return 0
	}
	if d := reset.Sub(ResponseDate(h)); d > 0 {
		return d
	}
	return 0
}

// spentBalanceRE matches the words OpenAI-compatible vendors answer a
// spent balance or credit with, under whatever status or type they give
// it: "insufficient balance" (DeepSeek's 402 "Insufficient Balance",
// MiniMax's 500 "insufficient balance (1008)", Z.ai's "Insufficient
// balance or no resource package", a gateway's "Insufficient account
// balance": Wei-Shaw/sub2api#890), "insufficient credits" (OpenRouter's
// 402), Together's 402 credit_limit "Credit limit exceeded. Please
// navigate to … to add credit or upgrade your plan."
// (expectedparrot/edsl#2098), Fireworks's 412 PRECONDITION_FAILED
// "Account … is suspended, possibly due to reaching the monthly spending
// limit or failure to pay past invoices." (pollinations/pollinations#12136),
// Z.ai's Chinese "余额不足或无可用资源包" (iOfficeAI/AionUi#557).
var spentBalanceRE = regexp.MustCompile(`(?i)\binsufficient (account )?(balance|credits?)\b|\bcredit limit exceeded\b|` +
	`\bsuspended, possibly due to reaching the monthly spending limit\b|余额不足`)

// SpentBalance reports whether msg says the account's balance, credit or
// spending limit is spent: a quota no wait restores (someone must pay),
// at any status.
func SpentBalance(msg string) bool {
	return strings.TrimSpace(msg) != "" && spentBalanceRE.MatchString(msg)
}
