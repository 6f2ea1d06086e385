package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/lightcone/lightcone/internal/server"
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
		Short: "Talk to a running Lightcone node: get, put, del, status",
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
	put := &cobra.Command{Use: "put KEY VALUE", Short: "Set a key", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := client()
			defer c.Close()
			cx, cancel := ctx()
			defer cancel()
			if err := c.Set(cx, args[0], args[1], 0).Err(); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "OK")
			return nil
		}}
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
	cmd.AddCommand(get, put, del, status)
	return cmd
}
