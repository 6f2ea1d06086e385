# A static lightcone binary on a distroless base.
#   docker build -t lightcone .
#   docker run -p 6379:6379 -p 7381:7381 lightcone
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/lightcone ./cmd/lightcone

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/lightcone /usr/local/bin/lightcone
VOLUME /data
EXPOSE 6379 7380 7381 7382
ENTRYPOINT ["/usr/local/bin/lightcone"]
CMD ["server", "--data-dir", "/data", "--resp-addr", "0.0.0.0:6379", "--http-addr", "0.0.0.0:7381"]
