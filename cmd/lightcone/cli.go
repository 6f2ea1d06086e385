package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
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
		Short: "Talk to a running Lightcone node: get, put, del, migrate, status",
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&addr, "addr", server.DefaultRESPAddr, "the node's RESP address")
	pf.StringVar(&httpAddr, "http-addr", server.DefaultHTTPAddr, "the node's HTTP admin address (status)")
	pf.StringVar(&password, "password", "", "RESP password (requirepass)")
	pf.StringVar(&token, "token", "", "HTTP admin bearer token")
	pf.DurationVar(&timeout, "timeout", 10*time.Second, "give up after this long")

	get := &cobra.Command{Use: "get KEY", Short: "Print a key's value", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := client()
			defer c.Close()
			cx, cancel := ctx()
			defer cancel()
			v, err := c.Get(cx, args[0]).Result()
			if errors.Is(err, redis.Nil) {
				return fmt.Errorf("%q: not found", args[0])
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), v)
			return nil
		}}
	var putKeyspace, putUpdate string
	put := &cobra.Command{Use: "put KEY VALUE", Short: "Set a key", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := client()
			defer c.Close()
			cx, cancel := ctx()
			defer cancel()
			if putKeyspace == "" && putUpdate == "" {
				if err := c.Set(cx, args[0], args[1], 0).Err(); err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), "OK")
				return nil
			}
			if _, err := wire.ParseUpdateMode(putUpdate); putUpdate != "" && err != nil {
				return fmt.Errorf("--update: %w", err)
			}
			conn := c.Conn()
			defer conn.Close()
			if putKeyspace != "" {
				if err := conn.Do(cx, "LC.KEYSPACE", putKeyspace).Err(); err != nil {
					return fmt.Errorf("keyspace %q: %w", putKeyspace, err)
				}
			}
			cmdArgs := []any{"LC.SET", args[0], args[1]}
			if putUpdate != "" {
				cmdArgs = append(cmdArgs, "UPDATE", putUpdate)
			}
			v, err := conn.Do(cx, cmdArgs...).Text()
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "OK (version %s)\n", v)
			return nil
		}}
	put.Flags().StringVar(&putKeyspace, "keyspace", "", "the key's keyspace (default: the node's default keyspace)")
	put.Flags().StringVar(&putUpdate, "update", "", "update mode for lease keyspaces: active or passive (default: the keyspace's)")
	del := &cobra.Command{Use: "del KEY...", Short: "Delete keys", Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := client()
			defer c.Close()
			cx, cancel := ctx()
			defer cancel()
			n, err := c.Del(cx, args...).Result()
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
	var keyspace string
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
	migrate.Flags().StringVar(&keyspace, "keyspace", "", "the key's keyspace (default: the node's default keyspace)")
	cmd.AddCommand(get, put, del, migrate, status)
	return cmd
}

// migrateRetry is how long migrate waits before asking again after a
// retryable (UNAVAILABLE) answer.
const migrateRetry = 100 * time.Millisecond

// migrateKey asks, on one connection, for key's mastership to move to
// region in keyspace ks ("" for the connection's default), retrying while
// the node answers UNAVAILABLE, and returns the new master's region.
func migrateKey(ctx context.Context, conn *redis.Conn, ks, key, region string) (string, error) {
	defer conn.Close()
	if ks != "" {
		if err := conn.Do(ctx, "LC.KEYSPACE", ks).Err(); err != nil {
			return "", fmt.Errorf("keyspace %q: %w", ks, err)
		}
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
