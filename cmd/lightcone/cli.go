package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/lightcone/lightcone/internal/server"
	"github.com/lightcone/lightcone/internal/wire"
)

func cliCmd() *cobra.Command {
	var addr, httpAddr, password, token string
	var timeout time.Duration
	client := func() *redis.Client {
		return redis.NewClient(&redis.Options{Addr: addr, Password: password, Protocol: 2,
			ReadTimeout: timeout, WriteTimeout: timeout, DialTimeout: timeout, MaxRetries: -1})
	}
	ctx := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), timeout)
	}
	cmd := &cobra.Command{
		Use:   "cli",
		Short: "Talk to a running Lightcone node: get, put, del, migrate, hold, txn, status",
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&addr, "addr", server.DefaultRESPAddr, "the node's RESP address")
	pf.StringVar(&httpAddr, "http-addr", server.DefaultHTTPAddr, "the node's HTTP admin address (status)")
	pf.StringVar(&password, "password", "", "RESP password (requirepass)")
	pf.StringVar(&token, "token", "", "HTTP admin bearer token")
	pf.DurationVar(&timeout, "timeout", 10*time.Second, "give up after this long")

	// keyspace is every data command's --keyspace: one command runs per
	// invocation.
	var keyspace string
	// in runs f on one connection in the --keyspace.
	in := func(cx context.Context, f func(*redis.Conn) error) error {
		c := client()
		defer c.Close()
		conn := c.Conn()
		defer conn.Close()
		if err := useKeyspace(cx, conn, keyspace); err != nil {
			return err
		}
		return f(conn)
	}
	get := &cobra.Command{Use: "get KEY", Short: "Print a key's value", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cx, cancel := ctx()
			defer cancel()
			var v string
			err := in(cx, func(c *redis.Conn) (err error) {
				v, err = c.Get(cx, args[0]).Result()
				return err
			})
			if errors.Is(err, redis.Nil) {
				return fmt.Errorf("%q: not found", args[0])
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), v)
			return nil
		}}
	var putUpdate string
	put := &cobra.Command{Use: "put KEY VALUE", Short: "Set a key", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := wire.ParseUpdateMode(putUpdate); putUpdate != "" && err != nil {
				return fmt.Errorf("--update: %w", err)
			}
			cx, cancel := ctx()
			defer cancel()
			// In the default keyspace a plain SET; otherwise LC.SET, which
			// takes the update mode and answers the version written.
			plain := keyspace == "" && putUpdate == ""
			cmdArgs := []any{"LC.SET", args[0], args[1]}
			if plain {
				cmdArgs[0] = "SET"
			}
			if putUpdate != "" {
				cmdArgs = append(cmdArgs, "UPDATE", putUpdate)
			}
			var v string
			if err := in(cx, func(c *redis.Conn) (err error) {
				v, err = c.Do(cx, cmdArgs...).Text()
				return err
			}); err != nil {
				return err
			}
			if plain {
				fmt.Fprintln(cmd.OutOrStdout(), v)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "OK (version %s)\n", v)
			return nil
		}}
	put.Flags().StringVar(&putUpdate, "update", "", "update mode for lease keyspaces: active or passive (default: the keyspace's)")
	del := &cobra.Command{Use: "del KEY...", Short: "Delete keys", Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cx, cancel := ctx()
			defer cancel()
			var n int64
			err := in(cx, func(c *redis.Conn) (err error) {
				n, err = c.Del(cx, args...).Result()
				return err
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d deleted\n", n)
			return nil
		}}
	status := &cobra.Command{Use: "status", Short: "Print the node's status (JSON)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cx, cancel := ctx()
			defer cancel()
			req, err := http.NewRequestWithContext(cx, http.MethodGet, "http://"+httpAddr+"/status", nil)
			if err != nil {
				return err
			}
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			defer res.Body.Close()
			if res.StatusCode != http.StatusOK {
				b, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
				return fmt.Errorf("status: %s: %s", res.Status, b)
			}
			_, err = io.Copy(cmd.OutOrStdout(), res.Body)
			return err
		}}
	migrate := &cobra.Command{Use: "migrate KEY REGION", Short: "Move a key's write mastership to a region (lease keyspaces)",
		Long: `Move KEY's write mastership to REGION and print the region of its master afterwards.
Only keyspaces whose protocol has per-key masters (lease) support it. While the
key is busy (a write, an election or another migration in progress) the node
answers UNAVAILABLE, and migrate retries until --timeout.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := client()
			defer c.Close()
			cx, cancel := ctx()
			defer cancel()
			region, err := migrateKey(cx, c.Conn(), keyspace, args[0], args[1])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: master in region %s\n", args[0], region)
			return nil
		}}
	hold := &cobra.Command{Use: "hold KEY... [-- COMMAND [ARG...]]",
		Short: "Acquire keys (rc keyspaces), run commands while holding them, release them",
		Long: `hold takes the hold on every KEY (LC.ACQUIRE, in sorted order) on one connection,
runs commands on that connection, and releases the keys (LC.RELEASE) when done.
In keyspaces whose protocol has holds (rc), reads and writes of a key are refused
outside a hold; other protocols refuse the acquire.

With "-- COMMAND ARG...", it runs that one RESP command (for example "-- get k" or
"-- set k v") and fails if it does. Without it, it reads commands from stdin, one
per line, arguments separated by spaces (no quoting), and prints each reply; an
error reply is printed as "(error) ..." and the next line runs. That is also an
interactive session when stdin is a terminal: the keys stay held until end of
input (Ctrl-D), as long as a command arrives at least every hold_timeout (the
keyspace's setting; a silent holder is released for it).

If hold exits without releasing (killed), closing its connection releases the keys.`,
		Example: `  lightcone cli hold --keyspace rc k -- set k v
  lightcone cli hold --keyspace rc k -- get k
  printf 'get a\nset b 1\n' | lightcone cli hold --keyspace rc a b`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			keys, command := args, []string(nil)
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				keys, command = args[:dash], args[dash:]
				if len(keys) == 0 {
					return errors.New("hold: name the keys to hold before --")
				}
				if len(command) == 0 {
					return errors.New("hold: no command after --")
				}
			}
			c := client()
			defer c.Close()
			conn := c.Conn()
			defer conn.Close()
			return holdKeys(context.Background(), timeout, conn, keyspace, keys, command, cmd.InOrStdin(), cmd.OutOrStdout())
		}}
	var readOnly bool
	txn := &cobra.Command{Use: "txn OP...", Short: "Run a transaction: declared reads, writes, deletes and adds of several keys",
		Long: `txn runs one transaction (RESP LC.TXN) of the operations given, in order:
"read KEY", "write KEY VALUE", "del KEY", "add KEY DELTA". It prints one line per
operation: the value read (or (nil)), OK, or an add's new value. The keyspace's
protocol runs it whole or not at all (a single-node server's default keyspace
does); keyspaces whose protocol runs no transactions refuse it.`,
		Example: `  lightcone cli txn add alice -5 add bob 5
  lightcone cli txn --readonly read alice read bob`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			cx, cancel := ctx()
			defer cancel()
			cmdArgs := []any{"LC.TXN"}
			if readOnly {
				cmdArgs = append(cmdArgs, "READONLY")
			}
			for _, a := range args {
				cmdArgs = append(cmdArgs, a)
			}
			var v any
			if err := in(cx, func(c *redis.Conn) (err error) {
				v, err = c.Do(cx, cmdArgs...).Result()
				return err
			}); err != nil {
				return err
			}
			res, _ := v.([]any)
			for _, e := range res {
				printReply(cmd.OutOrStdout(), e, "")
			}
			return nil
		}}
	txn.Flags().BoolVar(&readOnly, "readonly", false, "a read-only transaction (protocols may serve it locally)")
	for _, c := range []*cobra.Command{get, put, del, migrate, hold, txn} {
		c.Flags().StringVar(&keyspace, "keyspace", "", "the keyspace of the keys (default: the node's default keyspace)")
	}
	cmd.AddCommand(get, put, del, migrate, hold, txn, status)
	return cmd
}

// holdKeys acquires keys in keyspace ks ("" for the connection's default)
// on conn, runs command (or, if it is empty, each line of in), writing
// replies to out, and releases the keys. Each request gets its own
// timeout: an interactive session may last longer than one.
func holdKeys(ctx context.Context, timeout time.Duration, conn *redis.Conn, ks string, keys, command []string, in io.Reader, out io.Writer) (err error) {
	do := func(args ...any) *redis.Cmd {
		cx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return conn.Do(cx, args...)
	}
	cx, cancel := context.WithTimeout(ctx, timeout)
	err = useKeyspace(cx, conn, ks)
	cancel()
	if err != nil {
		return err
	}
	keys = slices.Clone(keys)
	slices.Sort(keys)
	keys = slices.Compact(keys)
	var held []string
	defer func() {
		for _, k := range held {
			if rerr := do("LC.RELEASE", k).Err(); rerr != nil && err == nil {
				err = fmt.Errorf("release %q: %s (the hold ended before: writes made after it ended were refused)", k, strings.TrimPrefix(rerr.Error(), "ERR "))
			}
		}
	}()
	for _, k := range keys {
		if err := do("LC.ACQUIRE", k).Err(); err != nil {
			msg := strings.TrimPrefix(err.Error(), "ERR ")
			if strings.Contains(msg, "unknown operation acquire") {
				if ks == "" {
					ks, _ = do("LC.KEYSPACE").Text()
				}
				return fmt.Errorf("acquire %q: keyspace %q: its protocol has no holds (only rc keyspaces do)", k, ks)
			}
			return fmt.Errorf("acquire %q: %s", k, msg)
		}
		held = append(held, k)
	}
	run := func(words []string) error {
		args := make([]any, len(words))
		for i, w := range words {
			args[i] = w
		}
		v, err := do(args...).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
		printReply(out, v, "")
		return nil
	}
	if len(command) > 0 {
		if err := run(command); err != nil {
			return fmt.Errorf("%s: %s", strings.Join(command, " "), strings.TrimPrefix(err.Error(), "ERR "))
		}
		return nil
	}
	sc := bufio.NewScanner(in)
	failed := 0
	for sc.Scan() {
		words := strings.Fields(sc.Text())
		if len(words) == 0 {
			continue
		}
		if err := run(words); err != nil {
			fmt.Fprintf(out, "(error) %s\n", strings.TrimPrefix(err.Error(), "ERR "))
			failed++
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("hold: reading commands: %w", err)
	}
	if failed > 0 {
		return fmt.Errorf("hold: %d command(s) failed", failed)
	}
	return nil
}

// printReply writes a RESP reply as redis-cli does, roughly: a nil reply
// as (nil), an array one element a line.
func printReply(out io.Writer, v any, indent string) {
	switch v := v.(type) {
	case nil:
		fmt.Fprintln(out, indent+"(nil)")
	case []any:
		if len(v) == 0 {
			fmt.Fprintln(out, indent+"(empty array)")
		}
		for _, e := range v {
			printReply(out, e, indent+"  ")
		}
	default:
		fmt.Fprintf(out, "%s%v\n", indent, v)
	}
}

// migrateRetry is how long migrate waits before asking again after a
// retryable (UNAVAILABLE) answer.
const migrateRetry = 100 * time.Millisecond

// migrateKey asks, on one connection, for key's mastership to move to
// region in keyspace ks ("" for the connection's default), retrying while
// the node answers UNAVAILABLE, and returns the new master's region.
func migrateKey(ctx context.Context, conn *redis.Conn, ks, key, region string) (string, error) {
	defer conn.Close()
	if err := useKeyspace(ctx, conn, ks); err != nil {
		return "", err
	}
	for {
		got, err := conn.Do(ctx, "LC.MIGRATE", key, region).Text()
		if err == nil {
			return got, nil
		}
		msg := err.Error()
		switch {
		case strings.Contains(msg, "unknown operation migrate"):
			if ks == "" {
				ks, _ = conn.Do(ctx, "LC.KEYSPACE").Text()
			}
			return "", fmt.Errorf("migrate %q: keyspace %q: its protocol does not support migration (only lease keyspaces have per-key masters)", key, ks)
		case !strings.HasPrefix(msg, "UNAVAILABLE "):
			return "", fmt.Errorf("migrate %q: %s", key, strings.TrimPrefix(msg, "ERR "))
		}
		t := time.NewTimer(migrateRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", fmt.Errorf("migrate %q: gave up: %s", key, msg)
		case <-t.C:
		}
	}
}

// useKeyspace switches conn to keyspace ks ("" leaves it in the node's
// default). The node refuses a keyspace it does not serve, naming those
// it does.
func useKeyspace(ctx context.Context, conn *redis.Conn, ks string) error {
	if ks == "" {
		return nil
	}
	if err := conn.Do(ctx, "LC.KEYSPACE", ks).Err(); err != nil {
		return fmt.Errorf("--keyspace: %s", strings.TrimPrefix(err.Error(), "ERR "))
	}
	return nil
}
