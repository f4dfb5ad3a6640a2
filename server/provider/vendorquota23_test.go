package provider

import (
	"net/http"
	"testing"
	"time"
)

// TestSpentBalanceWords: the vendors' words for a spent balance or credit
// (vendorquota.go cites each), and words that must not read as one: a
// rate limit, OpenAI's own quota (its code says it), an empty message.
func TestSpentBalanceWords(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]bool{
		"Insufficient Balance":                                               true,
		"insufficient balance (1008)":                                        true,
		"Insufficient balance or no resource package. Please recharge.":      true,
		"Insufficient account balance":                                       true,
		"Insufficient credits. Add more using https://openrouter.ai/credits": true,
		"Credit limit exceeded. Please navigate to https://api.together.xyz/settings/billing to add credit or upgrade your plan.": true,
		"Account acme is suspended, possibly due to reaching the monthly spending limit or failure to pay past invoices.":         true,
		"余额不足或无可用资源包,请充值。":                                                                                                        true,
		"": false,
		"You exceeded your current quota, please check your plan and billing details.": false,
		"insufficient_quota": false,
		"Rate limit reached for gpt-4o-mini in organization org-x on tokens per min (TPM): Limit 200000.": false,
		"You have been rate limited. Your rate limit is 60 queries per minute.":                           false,
	} {
		if got := SpentBalance(msg); got != want {
			t.Errorf("SpentBalance(%q) = %v, want %v", msg, got, want)
		}
	}
}

// TestMiniMaxPlanReset: the reset MiniMax's spent Token Plan names, from
// the answer's Date; none, or one already past, is no delay.
func TestMiniMaxPlanReset(t *testing.T) {
	t.Parallel()
	h := http.Header{"Date": {"Wed, 20 May 2026 17:30:00 GMT"}}
	for msg, want := range map[string]time.Duration{
		"usage limit exceeded, 5-hour usage limit reached for Token Plan Starter (1500/1500 used), resets at 2026-05-20T20:00:00Z":        150 * time.Minute,
		"usage limit exceeded, 5-hour usage limit reached for Token Plan Starter (1500/1500 used), resets at 2026-05-20T20:00:00Z (2056)": 150 * time.Minute,
		"resets at 2026-05-21T02:00:00+08:00": 30 * time.Minute,
		"resets at 2026-05-20T17:00:00Z":      0,
		"Token Plan usage limit reached: Upgrade your Token Plan or purchase Credits for more usage. (2056)": 0,
	} {
		if got := MiniMaxPlanReset(msg, h); got != want {
			t.Errorf("MiniMaxPlanReset(%q) = %v, want %v", msg, got, want)
		}
	}
}
