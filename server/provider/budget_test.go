package provider

import (
	"errors"
	"testing"
)

func TestBudget(t *testing.T) {
	t.Parallel()
	pool := NewPool(100)
	a, b := pool.NewBudget(80), pool.NewBudget(80)
	if err := a.Charge(60, 60); err != nil {
		t.Fatal(err)
	}
	var le *LimitError
	if err := b.Charge(60, 60); !errors.As(err, &le) || le.Limit != "limits.max_buffered_bytes" || pool.Used() != 60 {
		t.Fatalf("over the pool: %v, used %d", err, pool.Used())
	}
	if err := a.Charge(81, 21); !errors.As(err, &le) || le.Limit != "limits.max_response_bytes" {
		t.Fatalf("over the body limit: %v", err)
	}
	a.Release()
	if pool.Used() != 0 {
		t.Fatalf("used %d after release", pool.Used())
	}
	if err := b.Charge(60, 60); err != nil {
		t.Errorf("after release: %v", err)
	}
	var none *Budget
	if none.Charge(1<<40, 1<<40) != nil {
		t.Error("a nil budget is unbounded")
	}
	none.Release()
}
